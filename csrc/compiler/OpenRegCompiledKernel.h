// OpenRegCompiledKernel.h: launching a kernel that Inductor generated and compiled on the host.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

namespace c10::openreg {

// The one signature every generated entry point has (the Inductor backend
// writes it after each kernel): args[i] is the kernel-view address of pointer
// argument i, or the address of the value of scalar argument i.
using CompiledKernelEntry = void (*)(void** args);

struct CompiledKernelArg {
  enum class Kind : uint8_t { DevicePointer, Scalar };
  Kind kind;
  uint64_t bits;  // the device address, or the scalar's bytes (int64_t or double)
};

// Queues entry(args) on the current stream of openreg device `device`.
void launch_compiled_kernel(CompiledKernelEntry entry, DeviceIndex device,
                            std::vector<CompiledKernelArg> args);

}  // namespace c10::openreg

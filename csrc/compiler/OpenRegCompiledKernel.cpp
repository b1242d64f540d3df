// OpenRegCompiledKernel.cpp: the launch of generated kernels, with the eager kernels' pointer translation.
#include "OpenRegCompiledKernel.h"

#include <c10/core/DeviceGuard.h>
#include <c10/util/SmallVector.h>
#include <runtime/OpenRegLaunch.h>

#include <utility>

namespace c10::openreg {

// LITERALINCLUDE START: COMPILE_LAUNCH_IMPL
void launch_compiled_kernel(CompiledKernelEntry entry, DeviceIndex device,
                            std::vector<CompiledKernelArg> args) {
  TORCH_CHECK(entry != nullptr, "launch_compiled_kernel: the kernel entry point is null");
  c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, device));
  // The body runs on the stream's worker, the only place where device
  // addresses may be turned into addresses the host can touch.
  launch_kernel([entry, args = std::move(args)]() mutable {
    // Inductor gives a loop threads only when each gets enough work
    // (config.cpp.min_chunk_size): the kernel may use every kernel thread.
    use_kernel_threads();
    c10::SmallVector<void*, 16> slots(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].kind == CompiledKernelArg::Kind::DevicePointer) {
        OPENREG_CHECK(orGetKernelPointer(&slots[i], reinterpret_cast<void*>(args[i].bits)));
      } else {
        slots[i] = &args[i].bits;
      }
    }
    entry(slots.data());
  });
}
// LITERALINCLUDE END: COMPILE_LAUNCH_IMPL

}  // namespace c10::openreg

// Borrowed.h: device kernels borrowed from PyTorch's CPU implementations.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

namespace at::native::openreg {

// A boxed kernel for any functional, in-place or out= operator that has a Meta
// kernel: the Meta kernel gives the outputs' shapes on the host, and a device
// kernel runs the operator's CPU implementation on the device's memory.
void borrowed_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                     torch::jit::Stack* stack);

}  // namespace at::native::openreg

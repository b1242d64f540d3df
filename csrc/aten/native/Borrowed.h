// Borrowed.h: device kernels borrowed from PyTorch's CPU implementations.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

namespace at::native::openreg {

// A boxed kernel for any functional, in-place or out= operator that has a Meta
// kernel: the Meta kernel gives the outputs' shapes on the host, and a device
// kernel runs the operator's CPU implementation on the device's memory.
void borrowed_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                     torch::jit::Stack* stack);

// Registers borrowed_kernel for every remaining ATen operator that has a CPU
// and a Meta kernel and nothing for openreg; returns how many (see
// OpenRegBorrowed.cpp). Called once, when torch_openreg is imported.
int borrow_remaining_operators();

}  // namespace at::native::openreg

// Fallback.h: running operators openreg has no kernel for on the CPU.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

namespace at::native::openreg {

// Checks that the operands share one openreg device, then runs the op on CPU
// copies and copies the results back.
void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace at::native::openreg

// Fallback.h: running operators openreg has no kernel for on the CPU, observably.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <map>
#include <string>

namespace at::native::openreg {

// Checks that the operands share one openreg device, refuses operators that
// cannot run correctly on CPU copies, counts and warns, then runs the op on
// CPU copies with the CPU's kernel at `cpu_key` (CPU for dense operands,
// SparseCPU for sparse ones) and copies the results back.
void run_on_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack, c10::DispatchKey cpu_key);

// The global fallback of dense openreg tensors: run_on_cpu with the CPU key.
void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// How many times each operator fell back since start (or the last reset).
std::map<std::string, int64_t> fallback_counts();
void reset_fallback_counts();

// Why an operator can never fall back, or "" if it can.
std::string why_no_fallback(const c10::FunctionSchema& schema);

}  // namespace at::native::openreg

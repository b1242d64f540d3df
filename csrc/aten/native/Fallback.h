// Fallback.h: running operators openreg has no kernel for on the CPU, observably.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

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

// An operator's name with its overload ("add.out"), as errors and counts show it.
std::string display_name(const c10::FunctionSchema& schema);

// Why an operator can never fall back, or "" if it can.
std::string why_no_fallback(const c10::FunctionSchema& schema);

// LITERALINCLUDE START: FALLBACK_BY_NAME
// A backend fallback serves only the operators no other kernel claims, and a
// composite kernel claims every key. An operator with a kernel of its own at
// `cpu_key` (SparseCPU, QuantizedCPU) and a composite for every other key
// would take the composite at `key` (SparsePrivateUse1, ...), which treats the
// tensor as a dense one. Registers `kernel`, the fallback of `key`, by name for
// each of them; called once, when the library loads, after the registrations
// above it. Returns how many there were.
template <void (*kernel)(const c10::OperatorHandle&, torch::jit::Stack*)>
int fallback_by_name(c10::DispatchKey key, c10::DispatchKey cpu_key) {
  using c10::DispatchKey;
  auto* lib = new torch::Library(torch::Library::IMPL, "aten", key, __FILE__,
                                 __LINE__);  // kept for the process's life
  int count = 0;
  for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames()) {
    auto op = c10::Dispatcher::singleton().findOp(name);
    if (name.name.rfind("aten::", 0) != 0 || !op.has_value() || !op->hasSchema()) continue;
    bool composite =
        op->hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd) ||
        op->hasKernelForDispatchKey(DispatchKey::CompositeExplicitAutograd) ||
        op->hasKernelForDispatchKey(DispatchKey::CompositeExplicitAutogradNonFunctional);
    if (!composite || !op->hasKernelForDispatchKey(cpu_key) || op->hasKernelForDispatchKey(key) ||
        !why_no_fallback(op->schema()).empty()) {
      continue;
    }
    std::string qualified = name.name.substr(6);
    if (!name.overload_name.empty()) qualified += "." + name.overload_name;
    lib->impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<kernel>());
    ++count;
  }
  return count;
}
// LITERALINCLUDE END: FALLBACK_BY_NAME

}  // namespace at::native::openreg

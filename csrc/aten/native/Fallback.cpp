// Fallback.cpp: the global CPU fallback, counted, warned about once per op, and refusable.
#include "Fallback.h"

#include <ATen/native/CPUFallback.h>

#include "../../runtime/OpenRegFunctions.h"
#include "Boxed.h"
#include "SameDevice.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

namespace at::native::openreg {

namespace {
bool strict_mode() {
  static const bool strict = c10::openreg::env_flag("OPENREG_STRICT_FALLBACK");
  return strict;
}

// Guards counts() and warned(): operators fall back from any thread.
std::mutex counts_mu;
std::map<std::string, int64_t>& counts() {
  static auto* c = new std::map<std::string, int64_t>();
  return *c;
}
std::set<std::string>& warned() {
  static auto* w = new std::set<std::string>();
  return *w;
}

}  // namespace

std::string display_name(const c10::FunctionSchema& schema) {
  return schema.overload_name().empty() ? schema.name()
                                        : schema.name() + "." + schema.overload_name();
}

// LITERALINCLUDE START: FALLBACK_DENY_KINDS
std::string why_no_fallback(const c10::FunctionSchema& schema) {
  // A view must alias device memory; a CPU copy would silently stop aliasing.
  for (const auto& ret : schema.returns()) {
    if (ret.alias_info() != nullptr && !ret.alias_info()->isWrite()) {
      return "it returns a view, and a view of a CPU copy would not alias the device tensor";
    }
  }
  bool has_tensor_input = false;
  for (const auto& arg : schema.arguments()) {
    const auto& type = arg.real_type();
    // Random operators must draw from the openreg generator, not the CPU's.
    if (type->kind() == c10::TypeKind::OptionalType &&
        type->castRaw<c10::OptionalType>()->getElementType()->kind() ==
            c10::TypeKind::GeneratorType) {
      return "it draws random numbers, and the CPU would use its own generator instead of "
             "openreg's (seeding the device would have no effect)";
    }
    has_tensor_input = has_tensor_input || holds_tensors(type);
  }
  // A factory has no device input to copy: the CPU kernel would make a CPU tensor.
  if (!has_tensor_input) return "it creates tensors from nothing, so there is nothing to copy back";
  return "";
}
// LITERALINCLUDE END: FALLBACK_DENY_KINDS

// LITERALINCLUDE START: FALLBACK_GLOBAL_KERNEL
void run_on_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack, c10::DispatchKey cpu_key) {
  const auto& schema = op.schema();
  std::string name = display_name(schema);
  std::string why = why_no_fallback(schema);
  TORCH_CHECK_NOT_IMPLEMENTED(why.empty(), "'", name, "' is not implemented for openreg, and ",
                              "cannot fall back to the CPU: ", why);
  TORCH_CHECK_NOT_IMPLEMENTED(!strict_mode(), "'", name, "' is not implemented for openreg and ",
                              "OPENREG_STRICT_FALLBACK=1 forbids running it on the CPU");
  check_same_device(op, *stack);
  bool first_time;
  {
    std::lock_guard<std::mutex> lock(counts_mu);
    counts()[name]++;
    first_time = warned().insert(name).second;
  }
  if (first_time) {
    TORCH_WARN("'", name, "' is not implemented for openreg: it runs on the CPU, with copies to ",
               "and from the device (this warning appears once per operator; ",
               "torch.openreg.fallback_report() counts every fallback)");
  }
  at::native::cpu_fallback(op, stack, /*error_on_views=*/false, cpu_key);
}

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  run_on_cpu(op, stack, c10::DispatchKey::CPU);
}
// LITERALINCLUDE END: FALLBACK_GLOBAL_KERNEL

std::map<std::string, int64_t> fallback_counts() {
  std::lock_guard<std::mutex> lock(counts_mu);
  return counts();
}

void reset_fallback_counts() {
  std::lock_guard<std::mutex> lock(counts_mu);
  counts().clear();
}

}  // namespace at::native::openreg

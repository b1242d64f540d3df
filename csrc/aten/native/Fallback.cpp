// Fallback.cpp: the global CPU fallback, with PyTorch's usual mixed-device error.
#include "Fallback.h"

#include <ATen/native/CPUFallback.h>

namespace at::native::openreg {

namespace {
// A CPU tensor may join device tensors only as a 0-dim value, as on CUDA.
void check_same_device(const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
  const auto& schema = op.schema();
  size_t first = stack.size() - schema.arguments().size();
  std::optional<c10::Device> device;
  auto visit = [&](const at::Tensor& t) {
    if (!t.defined() || (t.is_cpu() && t.dim() == 0)) return;
    if (!device.has_value()) {
      device = t.device();
    } else if (t.device() != *device) {
      c10::Device openreg_side = device->is_cpu() ? t.device() : *device;
      c10::Device other_side = device->is_cpu() ? *device : t.device();
      TORCH_CHECK(false, "Expected all tensors to be on the same device, but found at least two "
                  "devices, ", openreg_side, " and ", other_side, "! (in ", schema.name(), ")");
    }
  };
  for (size_t i = first; i < stack.size(); ++i) {
    const c10::IValue& v = stack[i];
    if (v.isTensor()) {
      visit(v.toTensor());
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorVector()) visit(t);
    } else if (v.isOptionalTensorList()) {
      for (const std::optional<at::Tensor> t : v.toOptionalTensorList()) {
        if (t.has_value()) visit(*t);
      }
    }
  }
}
}  // namespace

// LITERALINCLUDE START: FALLBACK_GLOBAL_KERNEL
void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  check_same_device(op, *stack);
  at::native::cpu_fallback(op, stack);
}
// LITERALINCLUDE END: FALLBACK_GLOBAL_KERNEL

}  // namespace at::native::openreg

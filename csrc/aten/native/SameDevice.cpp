// SameDevice.cpp: PyTorch's one-device rule, for kernels' arguments and for boxed calls.
#include "SameDevice.h"

#include "Boxed.h"

namespace at::native::openreg {

void SameDevice::add(const at::Tensor& t, bool written) {
  if (!t.defined() || (t.is_cpu() && t.dim() == 0 && !written)) return;
  if (t.is_privateuseone() && !openreg_.has_value()) {
    openreg_ = t.device();
  } else if (t.device() != openreg_ && !other_.has_value()) {
    other_ = t.device();
  }
}

std::optional<c10::Device> SameDevice::check(const std::string& op) const {
  TORCH_CHECK(!(openreg_.has_value() && other_.has_value()),
              "Expected all tensors to be on the "
              "same device, but found at least two devices, ",
              *openreg_, " and ", *other_, "! (in ", op, ")");
  return openreg_;
}

c10::Device common_device(const char* op, std::initializer_list<at::Tensor> tensors) {
  SameDevice devices;
  for (const at::Tensor& t : tensors) devices.add(t);
  std::optional<c10::Device> device = devices.check(op);
  TORCH_CHECK(device.has_value(), op, ": expected at least one openreg tensor");
  return *device;
}

// LITERALINCLUDE START: FALLBACK_CHECK_SAME_DEVICE
std::optional<c10::Device> check_same_device(const c10::OperatorHandle& op,
                                             const torch::jit::Stack& stack) {
  const auto& schema = op.schema();
  SameDevice devices;
  const size_t first = stack.size() - schema.arguments().size();
  for (size_t i = first; i < stack.size(); ++i) {
    const auto* alias = schema.arguments()[i - first].alias_info();
    bool written = alias != nullptr && alias->isWrite();
    for_each_tensor(stack[i], [&](const at::Tensor& t) { devices.add(t, written); });
  }
  return devices.check(schema.name());
}
// LITERALINCLUDE END: FALLBACK_CHECK_SAME_DEVICE

}  // namespace at::native::openreg

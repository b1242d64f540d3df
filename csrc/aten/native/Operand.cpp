// Operand.cpp: device and result checks done on the host before a kernel is queued.
#include "Operand.h"

namespace at::native::openreg {

Operand::Operand(const at::Tensor& t) {
  if (!t.defined()) return;
  if (t.is_privateuseone()) {
    device_.emplace(t);
  } else if (t.unsafeGetTensorImpl()->is_wrapped_number()) {
    host_ = t;  // a Python number, made into a tensor for this call only
  } else {
    host_ = t.clone();  // the caller may change its CPU tensor after we return
  }
}

// LITERALINCLUDE START: OPERAND_SAME_DEVICE_DEF
void SameDevice::add(const at::Tensor& t) {
  if (!t.defined() || (t.is_cpu() && t.dim() == 0)) return;
  if (t.is_privateuseone() && !openreg_.has_value()) {
    openreg_ = t.device();
  } else if (t.device() != openreg_ && !other_.has_value()) {
    other_ = t.device();
  }
}

std::optional<c10::Device> SameDevice::check(const std::string& op) const {
  TORCH_CHECK(!(openreg_.has_value() && other_.has_value()), "Expected all tensors to be on the "
              "same device, but found at least two devices, ", *openreg_, " and ", *other_,
              "! (in ", op, ")");
  return openreg_;
}

c10::Device common_device(const char* op, std::initializer_list<at::Tensor> tensors) {
  SameDevice devices;
  for (const at::Tensor& t : tensors) devices.add(t);
  std::optional<c10::Device> device = devices.check(op);
  TORCH_CHECK(device.has_value(), op, ": expected at least one openreg tensor");
  return *device;
}
// LITERALINCLUDE END: OPERAND_SAME_DEVICE_DEF

// LITERALINCLUDE START: OPERAND_CHECK_RESULT
void check_result(const char* op, const at::Tensor& out, c10::ScalarType result_dtype,
                  c10::IntArrayRef result_shape) {
  TORCH_CHECK(c10::canCast(result_dtype, out.scalar_type()), "result type ", result_dtype,
              " can't be cast to the desired output type ", out.scalar_type());
  TORCH_CHECK(out.sizes() == result_shape, op, ": output with shape ", out.sizes(),
              " doesn't match the broadcast shape ", result_shape);
}
// LITERALINCLUDE END: OPERAND_CHECK_RESULT

// LITERALINCLUDE START: OPERAND_REFUSE_DEF
void refuse_while_capturing(std::string_view op) {
  TORCH_CHECK(!c10::openreg::getCurrentOpenRegStream().is_capturing(), op,
              " has outputs whose shapes depend on the data: it synchronizes with the device, "
              "which a stream being captured into a graph cannot do");
}
// LITERALINCLUDE END: OPERAND_REFUSE_DEF

}  // namespace at::native::openreg

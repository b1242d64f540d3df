// Operand.h: checks and captures shared by the native kernels.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <string_view>

#include "../../runtime/OpenRegLaunch.h"

namespace at::native::openreg {

// LITERALINCLUDE START: OPERAND_TYPE
// A tensor argument as a kernel sees it, captured at launch: a device tensor
// through the kernel view, or a 0-dim CPU tensor (a Python number) by value.
// Undefined tensors stay undefined.
class Operand {
 public:
  explicit Operand(const at::Tensor& t);
  at::Tensor cpu() const { return device_ ? device_->cpu() : host_; }  // inside the kernel

 private:
  std::optional<c10::openreg::KernelTensor> device_;
  at::Tensor host_;
};
// LITERALINCLUDE END: OPERAND_TYPE

// LITERALINCLUDE START: OPERAND_WALKER
// The one walk over the tensors an argument or result holds: a Tensor, each
// element of a Tensor[], each present element of a Tensor?[]. Anything else
// holds no tensor. map_tensors rebuilds the value with each tensor replaced by
// f(tensor), in the order for_each_tensor visits them.
template <class F>
void for_each_tensor(const c10::IValue& v, F&& f) {
  if (v.isTensor()) {
    f(v.toTensor());
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorVector()) f(t);
  } else if (v.isOptionalTensorList()) {
    for (const std::optional<at::Tensor> t : v.toOptionalTensorList()) {
      if (t.has_value()) f(*t);
    }
  }
}

template <class F>
c10::IValue map_tensors(const c10::IValue& v, F&& f) {
  if (v.isTensor()) return f(v.toTensor());
  if (v.isTensorList()) {
    std::vector<at::Tensor> list;
    for (const at::Tensor& t : v.toTensorVector()) list.push_back(f(t));
    return list;
  }
  if (v.isOptionalTensorList()) {
    c10::List<std::optional<at::Tensor>> list;
    for (const std::optional<at::Tensor> t : v.toOptionalTensorList()) {
      list.push_back(t.has_value() ? std::optional<at::Tensor>(f(*t)) : std::nullopt);
    }
    return list;
  }
  return v;
}
// LITERALINCLUDE END: OPERAND_WALKER

// LITERALINCLUDE START: OPERAND_SAME_DEVICE_DECL
// Collects an operator's tensors and checks PyTorch's rule: one device, which
// 0-dim CPU tensors (Python numbers) may join, as on CUDA.
class SameDevice {
 public:
  void add(const at::Tensor& t);
  // Raises "Expected all tensors to be on the same device" if two devices
  // met; returns the openreg device, if any tensor was on one.
  std::optional<c10::Device> check(const std::string& op) const;

 private:
  std::optional<c10::Device> openreg_;
  std::optional<c10::Device> other_;
};

// The openreg device all tensors share (there must be one); see SameDevice.
c10::Device common_device(const char* op, std::initializer_list<at::Tensor> tensors);
// LITERALINCLUDE END: OPERAND_SAME_DEVICE_DECL

// The dtype checks an out= or in-place result gets on CPU, done before launch.
void check_result(const char* op, const at::Tensor& out, c10::ScalarType result_dtype,
                  c10::IntArrayRef result_shape);

// LITERALINCLUDE START: OPERAND_REFUSE_WHILE_CAPTURING
// An operator whose outputs' shapes depend on the data waits for the device
// (nonzero, masked_select, unique): raises if the current stream is being
// captured into a graph, which cannot wait for anything.
void refuse_while_capturing(std::string_view op);
// LITERALINCLUDE END: OPERAND_REFUSE_WHILE_CAPTURING

}  // namespace at::native::openreg

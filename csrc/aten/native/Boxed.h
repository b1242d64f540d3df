// Boxed.h: a boxed call's arguments as kernels see them: the walker over their tensors, the operand type.
#pragma once

#include <algorithm>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <ATen/core/jit_type.h>
#include <c10/util/SmallVector.h>

#include <optional>
#include <vector>

#include "../../runtime/OpenRegLaunch.h"

namespace at::native::openreg {

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
  } else if (v.isList()) {
    // A Tensor?[] that TorchScript built carries its own element type object,
    // which isOptionalTensorList() (a pointer comparison) does not recognize.
    for (const c10::IValue& e : v.toListRef()) {
      if (e.isTensor()) f(e.toTensor());
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
  if (v.isList()) {  // a Tensor?[] of TorchScript's (see for_each_tensor)
    c10::List<c10::IValue> given = v.toList();
    bool holds =
        std::any_of(given.begin(), given.end(), [](const c10::IValue& e) { return e.isTensor(); });
    if (!holds) return v;
    c10::impl::GenericList list(given.elementType());
    for (c10::IValue e : given) list.push_back(e.isTensor() ? c10::IValue(f(e.toTensor())) : e);
    return list;
  }
  return v;
}

// Whether an argument of this schema type can hold tensors: the types the
// walker above visits, as the schema declares them.
bool holds_tensors(const c10::TypePtr& type);

// A call's arguments (or results) captured at launch: each value with its
// tensors blanked out, and the tensors as Operands, in the order the walker
// visits them. Inside the kernel, append_to() rebuilds the values around
// CPU tensors over the device's memory.
class Captured {
 public:
  Captured(const c10::IValue* begin, const c10::IValue* end) {
    for (const c10::IValue* v = begin; v != end; ++v) {
      values_.push_back(map_tensors(*v, [this](const at::Tensor& t) {
        operands_.emplace_back(t);
        return at::Tensor();
      }));
    }
  }

  void append_to(torch::jit::Stack& stack) const {  // inside the kernel
    size_t next = 0;
    for (const c10::IValue& v : values_) {
      stack.push_back(map_tensors(v, [&](const at::Tensor&) { return operands_[next++].cpu(); }));
    }
  }

 private:
  c10::SmallVector<c10::IValue, 6> values_;
  c10::SmallVector<Operand, 4> operands_;
};

}  // namespace at::native::openreg

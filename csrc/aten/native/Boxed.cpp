// Boxed.cpp: the operand type's capture and the schema-side twin of the tensor walker.
#include "Boxed.h"

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

// Tensor, Tensor?, Tensor[] and Tensor?[]: the arguments a fallback copies.
bool holds_tensors(const c10::TypePtr& type) {
  switch (type->kind()) {
    case c10::TypeKind::TensorType: return true;
    case c10::TypeKind::OptionalType:
      return holds_tensors(type->castRaw<c10::OptionalType>()->getElementType());
    case c10::TypeKind::ListType:
      return holds_tensors(type->castRaw<c10::ListType>()->getElementType());
    default: return false;
  }
}

}  // namespace at::native::openreg

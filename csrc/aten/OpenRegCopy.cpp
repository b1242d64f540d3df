// OpenRegCopy.cpp: registers _to_copy; lets conjugate and negative views reach _copy_from.
#include <torch/library.h>

#include "native/Copy.h"

namespace at::native::openreg {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("_to_copy", TORCH_FN(_to_copy)); }

// LITERALINCLUDE START: COPY_MATH_BITS_FALLTHROUGH
// PyTorch resolves a conjugate (or negative) view before most operators run,
// through a fallback on the Conjugate (Negative) key. A copy is how a view is
// resolved, so copy_ skips that fallback and handles the bits itself; the
// backend's _copy_from, which copy_ calls for openreg tensors, must do the
// same, or the fallback resolves its source by cloning it, which copies it
// again through _copy_from, unresolved.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
// LITERALINCLUDE END: COPY_MATH_BITS_FALLTHROUGH

}  // namespace at::native::openreg

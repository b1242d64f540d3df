// OpenRegMinimal.cpp: registers the minimal operator set and the global CPU fallback.
// LITERALINCLUDE START: FALLBACK_OPENREG_MINIMAL_INCLUDES
#include <ATen/ops/is_set_to_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <torch/library.h>

#include "native/Fallback.h"
#include "native/Minimal.h"
// LITERALINCLUDE END: FALLBACK_OPENREG_MINIMAL_INCLUDES

namespace at::native::openreg {

// LITERALINCLUDE START: MINIMAL_REGISTER
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", TORCH_FN(empty_memory_format));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("as_strided", TORCH_FN(as_strided));
  m.impl("resize_", TORCH_FN(resize_));
  m.impl("_reshape_alias", TORCH_FN(_reshape_alias));
  m.impl("_copy_from", TORCH_FN(_copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(_copy_from_and_resize));
  m.impl("_local_scalar_dense", TORCH_FN(_local_scalar_dense));
  m.impl("set_.source_Tensor", TORCH_FN(set_source_Tensor));
  m.impl("set_.source_Storage", TORCH_FN(set_source_Storage));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(set_source_Storage_storage_offset));
  m.impl("view", TORCH_FN(view));
  m.impl("_has_compatible_shallow_copy_type", TORCH_FN(_has_compatible_shallow_copy_type));
}
// LITERALINCLUDE END: MINIMAL_REGISTER

// LITERALINCLUDE START: MINIMAL_GENERIC_KERNELS
// Views beyond the minimal set: they must alias device memory, so the fallback
// refuses them, and their generic implementations serve every strided device.
// So does is_set_to, a question about the tensors' own storage and layout,
// which the fallback would ask of its CPU copies (always no).
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("is_set_to", TORCH_FN(at::native::is_set_to));
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("view_as_real", TORCH_FN(at::native::view_as_real));
  m.impl("view_as_complex", TORCH_FN(at::native::view_as_complex));
}
// LITERALINCLUDE END: MINIMAL_GENERIC_KERNELS

// LITERALINCLUDE START: FALLBACK_GLOBAL_REGISTER
TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}
// LITERALINCLUDE END: FALLBACK_GLOBAL_REGISTER

}  // namespace at::native::openreg

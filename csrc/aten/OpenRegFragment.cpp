// OpenRegFragment.cpp: extends the openreg operator namespace from a second file.
#include <ATen/ops/add.h>
#include <torch/library.h>

namespace at::native::openreg {

namespace {
at::Tensor custom_add(const at::Tensor& self, const at::Tensor& other) {
  return at::add(self, other);
}
}  // namespace

// LITERALINCLUDE START: CUSTOM_OP_FRAGMENT
// TORCH_LIBRARY may appear once per namespace; fragments add to it from
// anywhere. custom_add is CompositeImplicitAutograd: written with other
// operators, it works on every device and gets autograd from them.
TORCH_LIBRARY_FRAGMENT(openreg, m) {
  m.def("custom_add(Tensor self, Tensor other) -> Tensor");
  m.impl("custom_add", c10::DispatchKey::CompositeImplicitAutograd, TORCH_FN(custom_add));
}
// LITERALINCLUDE END: CUSTOM_OP_FRAGMENT

}  // namespace at::native::openreg

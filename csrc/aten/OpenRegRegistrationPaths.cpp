// OpenRegRegistrationPaths.cpp: the other registration paths: stubs, custom operators, autograd, overrides.
#include <ATen/native/DispatchStub.h>
#include <ATen/native/UnaryOps.h>
#include <ATen/ops/abs_native.h>
#include <torch/library.h>

#include "native/RegistrationPaths.h"
#include "native/Fallback.h"

namespace at::native {

// LITERALINCLUDE START: STUB_REGISTER
// The shared abs.out kernel (also CPU's and CUDA's) serves openreg; only the
// innermost loop, abs_stub, is the device's own.
REGISTER_PRIVATEUSE1_DISPATCH(abs_stub, &openreg::abs_kernel)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("abs.out", TORCH_FN(at::native::abs_out)); }
// LITERALINCLUDE END: STUB_REGISTER

}  // namespace at::native

namespace at::native::openreg {

// LITERALINCLUDE START: CUSTOM_OP_SCHEMA
// A new namespace: its operators' schemas, as torch.ops.openreg.* sees them.
TORCH_LIBRARY(openreg, m) {
  m.def("custom_abs(Tensor input) -> Tensor");
  m.def("custom_autograd_fn_aliasing(Tensor(a) input) -> Tensor(a)");
}
// LITERALINCLUDE END: CUSTOM_OP_SCHEMA

// LITERALINCLUDE START: CUSTOM_OP_KERNELS_REGISTER
TORCH_LIBRARY_IMPL(openreg, PrivateUse1, m) {
  m.impl("custom_abs", TORCH_FN(custom_abs));
  m.impl("custom_autograd_fn_aliasing", TORCH_FN(custom_autograd_fn_aliasing));
}

TORCH_LIBRARY_IMPL(openreg, Meta, m) { m.impl("custom_abs", TORCH_FN(custom_abs_meta)); }

TORCH_LIBRARY_IMPL(openreg, AutogradPrivateUse1, m) {
  m.impl("custom_abs", TORCH_FN(custom_abs_autograd));
  m.impl("custom_autograd_fn_aliasing", TORCH_FN(custom_autograd_fn_aliasing_autograd));
}

// Custom operators have no autocast policy: autocast passes them through.
TORCH_LIBRARY_IMPL(openreg, AutocastPrivateUse1, m) {
  m.impl("custom_abs", torch::CppFunction::makeFallthrough());
}
// LITERALINCLUDE END: CUSTOM_OP_KERNELS_REGISTER

// LITERALINCLUDE START: AUTOGRAD_SELU_REGISTER
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) { m.impl("selu", TORCH_FN(selu_autograd)); }
// LITERALINCLUDE END: AUTOGRAD_SELU_REGISTER

// LITERALINCLUDE START: OVERRIDE_AND_PER_OP_FALLBACK
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // Overrides clone's CompositeExplicitAutograd implementation for openreg;
  // autograd still comes from clone's own formula on AutogradPrivateUse1.
  m.impl("clone", TORCH_FN(clone));
  // A per-operator fallback: explicitly the CPU for this operator, the way a
  // backend without a global fallback opts operators in one by one.
  m.impl("logaddexp", torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}
// LITERALINCLUDE END: OVERRIDE_AND_PER_OP_FALLBACK

}  // namespace at::native::openreg

// RegistrationPaths.h: kernels for the other registration paths (stubs, custom operators, autograd).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/TensorIterator.h>

namespace at::native::openreg {

// The device's implementation of abs_stub, used by the shared abs.out.
void abs_kernel(at::TensorIteratorBase& iter);

// openreg::custom_abs: device kernel, Meta kernel, autograd kernel.
at::Tensor custom_abs(const at::Tensor& input);
at::Tensor custom_abs_meta(const at::Tensor& input);
at::Tensor custom_abs_autograd(const at::Tensor& input);

// openreg::custom_autograd_fn_aliasing: returns a view of its input.
at::Tensor custom_autograd_fn_aliasing(const at::Tensor& input);
at::Tensor custom_autograd_fn_aliasing_autograd(const at::Tensor& input);

// aten::selu with openreg's own backward, registered on AutogradPrivateUse1.
at::Tensor selu_autograd(const at::Tensor& self);

// aten::clone, overriding its composite implementation with one device copy.
at::Tensor clone(const at::Tensor& self, std::optional<c10::MemoryFormat> memory_format);

}  // namespace at::native::openreg

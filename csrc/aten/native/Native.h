// Native.h: compute kernels that run on openreg device memory through the launch path.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

namespace at::native::openreg {

at::Tensor add(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha);
at::Tensor& add_(at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha);
at::Tensor& add_out(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha,
                    at::Tensor& out);
at::Tensor sub(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha);
at::Tensor& sub_(at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha);
at::Tensor& sub_out(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha,
                    at::Tensor& out);
at::Tensor mul(const at::Tensor& self, const at::Tensor& other);
at::Tensor& mul_(at::Tensor& self, const at::Tensor& other);
at::Tensor& mul_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out);
at::Tensor div(const at::Tensor& self, const at::Tensor& other);
at::Tensor& div_(at::Tensor& self, const at::Tensor& other);
at::Tensor& div_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out);

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2);
at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out);

at::Tensor& fill_(at::Tensor& self, const c10::Scalar& value);
at::Tensor& zero_(at::Tensor& self);

}  // namespace at::native::openreg

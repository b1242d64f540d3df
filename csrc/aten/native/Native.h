// Native.h: compute kernels that run on openreg device memory through the launch path.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/Generator.h>
#include <c10/core/Scalar.h>

#include <optional>
#include <tuple>

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

at::Tensor& uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> gen);
at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen);
at::Tensor& random_(at::Tensor& self, std::optional<at::Generator> gen);
at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                        std::optional<at::Generator> gen);
at::Tensor& random_to(at::Tensor& self, int64_t to, std::optional<at::Generator> gen);
at::Tensor& bernoulli_float(at::Tensor& self, double p, std::optional<at::Generator> gen);
at::Tensor& bernoulli_tensor(at::Tensor& self, const at::Tensor& p, std::optional<at::Generator> gen);

std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p,
                                                  std::optional<bool> train);
at::Tensor native_dropout_backward(const at::Tensor& grad_output, const at::Tensor& mask,
                                   double scale);

at::Tensor& fill_(at::Tensor& self, const c10::Scalar& value);
at::Tensor& zero_(at::Tensor& self);

}  // namespace at::native::openreg

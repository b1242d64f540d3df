// Activation.h: the activations openreg computes with kernels of its own.
#pragma once

#include <ATen/core/Tensor.h>

namespace at::native::openreg {

at::Tensor relu(const at::Tensor& self);
at::Tensor& relu_(at::Tensor& self);

}  // namespace at::native::openreg

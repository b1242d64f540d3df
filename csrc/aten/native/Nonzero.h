// Nonzero.h: the kernels whose results' sizes only the data knows: nonzero and masked_select.
#pragma once

#include <ATen/core/Tensor.h>

namespace at::native::openreg {

at::Tensor nonzero(const at::Tensor& self);
at::Tensor masked_select(const at::Tensor& self, const at::Tensor& mask);

}  // namespace at::native::openreg

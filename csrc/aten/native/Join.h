// Join.h: cat and stack, joined on the device by block copies when the inputs allow it.
#pragma once

#include <ATen/core/Tensor.h>

namespace at::native::openreg {

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim);
at::Tensor stack(at::TensorList tensors, int64_t dim);

}  // namespace at::native::openreg

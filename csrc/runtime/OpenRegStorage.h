// OpenRegStorage.h: the check that a tensor still fits its storage before device memory is touched.
#pragma once

#include <ATen/core/Tensor.h>

namespace c10::openreg {

// Raises PyTorch's usual "setStorage: ... out of bounds for storage of size N"
// when the storage was shrunk (untyped_storage().resize_) below what the
// tensor's sizes, strides and offset reach; the device would otherwise be
// asked to read or write memory the tensor no longer owns.
void check_storage_fits(const at::Tensor& tensor);

}  // namespace c10::openreg

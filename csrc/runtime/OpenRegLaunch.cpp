// OpenRegLaunch.cpp: the in-kernel view of a device tensor.
#include "OpenRegLaunch.h"

#include <ATen/ops/from_blob.h>

namespace c10::openreg {

at::Tensor KernelTensor::cpu() const {
  at::Tensor t =
      at::from_blob(kernel_pointer(data_), sizes_, strides_, at::TensorOptions().dtype(dtype_));
  if (conj_) t._set_conj(true);
  if (neg_) t._set_neg(true);
  return t;
}

}  // namespace c10::openreg

// OpenRegLaunch.cpp: the in-kernel view of a device tensor.
#include "OpenRegLaunch.h"

#include <ATen/ops/from_blob.h>

namespace c10::openreg {

at::Tensor KernelTensor::cpu() const {
  void* kernel_ptr = nullptr;
  OPENREG_CHECK(orGetKernelPointer(&kernel_ptr, data_));
  return at::from_blob(kernel_ptr, sizes_, strides_, at::TensorOptions().dtype(dtype_));
}

}  // namespace c10::openreg

// OpenRegZeroTensor.cpp: registers openreg's factory of storage-less zero tensors.
#include <torch/library.h>

#include "native/ZeroTensor.h"

namespace at::native::openreg {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_efficientzerotensor", TORCH_FN(efficientzerotensor));
}

}  // namespace at::native::openreg

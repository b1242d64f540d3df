// OpenRegZeroTensor.cpp: registers openreg's factory of storage-less zero tensors.
// LITERALINCLUDE START: ZERO_OPENREG_ZERO_TENSOR_INCLUDES
#include <torch/library.h>

#include "native/ZeroTensor.h"
// LITERALINCLUDE END: ZERO_OPENREG_ZERO_TENSOR_INCLUDES

namespace at::native::openreg {

// LITERALINCLUDE START: ZERO_TENSOR_REGISTER
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_efficientzerotensor", TORCH_FN(efficientzerotensor));
}
// LITERALINCLUDE END: ZERO_TENSOR_REGISTER

}  // namespace at::native::openreg

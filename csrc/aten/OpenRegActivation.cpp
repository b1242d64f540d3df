// OpenRegActivation.cpp: registers relu and relu_, written for the device.
#include <torch/library.h>

#include "native/Activation.h"

namespace at::native::openreg {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("relu", TORCH_FN(relu));
  m.impl("relu_", TORCH_FN(relu_));
}

}  // namespace at::native::openreg

// OpenRegNonzero.cpp: registers nonzero and masked_select, whose results' sizes only the data knows.
#include <torch/library.h>

#include "native/Nonzero.h"

namespace at::native::openreg {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nonzero", TORCH_FN(nonzero));
  m.impl("masked_select", TORCH_FN(masked_select));
}

}  // namespace at::native::openreg

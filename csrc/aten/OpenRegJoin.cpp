// OpenRegJoin.cpp: registers cat and stack.
#include <torch/library.h>

#include "native/Join.h"

namespace at::native::openreg {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cat", TORCH_FN(cat));
  m.impl("stack", TORCH_FN(stack));
}

}  // namespace at::native::openreg

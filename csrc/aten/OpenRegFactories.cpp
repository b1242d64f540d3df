// OpenRegFactories.cpp: registers the factories openreg computes on the host.
#include <torch/library.h>

#include "native/Factories.h"

namespace at::native::openreg {

// LITERALINCLUDE START: FACTORIES_REGISTER
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("tril_indices", TORCH_FN(tril_indices));
  m.impl("triu_indices", TORCH_FN(triu_indices));
}
// LITERALINCLUDE END: FACTORIES_REGISTER

}  // namespace at::native::openreg

// OpenRegGradScaler.cpp: registers the gradient scaler's kernels for openreg.
#include <torch/library.h>

#include "GradScaler.h"

namespace at::native::openreg {

// LITERALINCLUDE START: AMP_SCALER_REGISTER
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale_",
         TORCH_FN(amp_foreach_non_finite_check_and_unscale_));
  m.impl("_amp_update_scale_", TORCH_FN(amp_update_scale_));
}
// LITERALINCLUDE END: AMP_SCALER_REGISTER

}  // namespace at::native::openreg

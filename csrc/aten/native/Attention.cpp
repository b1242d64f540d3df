// Attention.cpp: which scaled_dot_product_attention implementation openreg tensors take.
#include "Native.h"

namespace at::native::openreg {

// openreg has no fused attention kernels: scaled_dot_product_attention takes
// PyTorch's math path, built from operators the device implements.
int64_t fused_sdp_choice(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                         const std::optional<at::Tensor>&, double, bool, std::optional<double>,
                         bool) {
  return 0;  // sdp::SDPBackend::math
}

}  // namespace at::native::openreg

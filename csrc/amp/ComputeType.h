// ComputeType.h: the dtype the device's matrix and convolution kernels compute float16 in.
#pragma once

#include <ATen/core/Tensor.h>

namespace at::native::openreg {

// LITERALINCLUDE START: AMP_COMPUTE_TYPE
// The emulated device's arithmetic is the host CPU's, which has no fast
// float16 matrix kernels (PyTorch's CPU float16 GEMM and convolution are many
// times slower than its float32 ones). So float16 operands are widened to
// float32, multiplied and accumulated there, and the result is rounded to
// float16 once when it is stored: the numerics of CUDA's float16 GEMMs
// (float32 accumulation), at float32 speed. bfloat16 keeps PyTorch's CPU kernels, which already
// accumulate in float32 and are fast where the CPU has bfloat16 instructions.
inline at::Tensor in_compute_type(const at::Tensor& t) {
  return t.scalar_type() == at::kHalf ? t.to(at::kFloat) : t;
}
// LITERALINCLUDE END: AMP_COMPUTE_TYPE

}  // namespace at::native::openreg

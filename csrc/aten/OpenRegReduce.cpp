// OpenRegReduce.cpp: registers the reductions with a short host path: sums, means, norms, extrema, scans.
#include <torch/library.h>

#include "native/Reduce.h"

namespace at::native::openreg {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sum", TORCH_FN(sum));
  m.impl("mean", TORCH_FN(mean));
  m.impl("sum.dim_IntList", TORCH_FN(sum_dim));
  m.impl("mean.dim", TORCH_FN(mean_dim));
  m.impl("linalg_vector_norm", TORCH_FN(linalg_vector_norm));
  m.impl("argmax", TORCH_FN(argmax));
  m.impl("argmin", TORCH_FN(argmin));
  m.impl("amax", TORCH_FN(amax));
  m.impl("amin", TORCH_FN(amin));
  m.impl("cumsum", TORCH_FN(cumsum));
  m.impl("mse_loss", TORCH_FN(mse_loss));
  m.impl("all", TORCH_FN(all));
  m.impl("any", TORCH_FN(any));
}

}  // namespace at::native::openreg

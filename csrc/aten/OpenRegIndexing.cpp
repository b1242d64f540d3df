// OpenRegIndexing.cpp: registers x[idx], index_select, index_put_ and gather.
#include <torch/library.h>

#include "native/Indexing.h"

namespace at::native::openreg {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("index.Tensor", TORCH_FN(index));
  m.impl("index_select", TORCH_FN(index_select));
  m.impl("index_put_", TORCH_FN(index_put_));
  m.impl("gather", TORCH_FN(gather));
  m.impl("tril_indices", TORCH_FN(tril_indices));
  m.impl("triu_indices", TORCH_FN(triu_indices));
}

}  // namespace at::native::openreg

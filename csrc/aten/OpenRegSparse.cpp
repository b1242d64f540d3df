// OpenRegSparse.cpp: registers the sparse refusal for every sparse dispatch key of openreg.
#include <torch/library.h>

#include "native/Sparse.h"

namespace at::native::openreg {

// LITERALINCLUDE START: SPARSE_REGISTER
// Sparse tensors dispatch on their own keys (SparsePrivateUse1 for COO,
// SparseCsrPrivateUse1 for CSR/CSC/BSR/BSC); a fallback on each catches
// every operator. Converting a dense openreg tensor to a sparse layout is
// refused at the dense key, where the conversion operators are.
TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&sparse_not_supported>());
}
TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&sparse_not_supported>());
}
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* name : {"_to_sparse", "_to_sparse.sparse_dim", "_to_sparse_csr",
                           "_to_sparse_csc", "_to_sparse_bsr", "_to_sparse_bsc"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&sparse_not_supported>());
  }
}
// LITERALINCLUDE END: SPARSE_REGISTER

}  // namespace at::native::openreg

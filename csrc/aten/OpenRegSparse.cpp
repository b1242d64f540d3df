// OpenRegSparse.cpp: registers sparse COO tensors on openreg, and the refusal of compressed layouts.
#include <ATen/ops/_coalesced_native.h>
#include <ATen/ops/_dimI_native.h>
#include <ATen/ops/_dimV_native.h>
#include <ATen/ops/_indices_native.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_sparse_broadcast_to_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_native.h>
#include <ATen/ops/_values_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/copy_sparse_to_sparse_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/indices_native.h>
#include <ATen/ops/is_coalesced_native.h>
#include <ATen/ops/permute_native.h>
#include <ATen/ops/resize_as_sparse_native.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/sparse_resize_and_clear_native.h>
#include <ATen/ops/sparse_resize_native.h>
#include <ATen/ops/unsqueeze_native.h>
#include <ATen/ops/values_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/zero_native.h>
#include <torch/library.h>

#include "native/Fallback.h"
#include "native/Sparse.h"

#include <string>

namespace at::native::openreg {

namespace {
const char* const kCompressedConstructors[] = {"_sparse_compressed_tensor_unsafe",
                                               "sparse_compressed_tensor.comp_plain_value",
                                               "sparse_compressed_tensor.comp_plain_value_size",
                                               "_sparse_csr_tensor_unsafe",
                                               "_sparse_csc_tensor_unsafe",
                                               "_sparse_bsr_tensor_unsafe",
                                               "_sparse_bsc_tensor_unsafe",
                                               "sparse_csr_tensor.crow_col_value",
                                               "sparse_csr_tensor.crow_col_value_size",
                                               "sparse_csc_tensor.ccol_row_value",
                                               "sparse_csc_tensor.ccol_row_value_size",
                                               "sparse_bsr_tensor.crow_col_value",
                                               "sparse_bsr_tensor.crow_col_value_size",
                                               "sparse_bsc_tensor.ccol_row_value",
                                               "sparse_bsc_tensor.ccol_row_value_size"};
const char* const kCompressedConversions[] = {"_to_sparse_csr", "_to_sparse_csc", "_to_sparse_bsr",
                                              "_to_sparse_bsc"};
}  // namespace

// LITERALINCLUDE START: SPARSE_REGISTER_STRUCTURE
// A sparse COO tensor on openreg is PyTorch's SparseTensorImpl holding two
// dense openreg tensors, indices and values. PyTorch's own kernels for making
// one, reading its parts and copying it never look at the data: they serve
// SparsePrivateUse1 as they serve SparseCPU, so moving a sparse tensor to or
// from openreg, and the fallback's copies, never fall back themselves.
TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  m.impl("empty.memory_format", TORCH_FN(at::native::empty_sparse_symint));
  m.impl("empty_like", TORCH_FN(at::native::empty_like_sparse_coo));
  m.impl("_sparse_coo_tensor_with_dims", TORCH_FN(at::native::new_with_dims_sparse));
  m.impl("_sparse_coo_tensor_with_dims_and_tensors", TORCH_FN(sparse_coo_from_parts));
  m.impl("_indices", TORCH_FN(at::native::_indices_sparse));
  m.impl("_values", TORCH_FN(at::native::_values_sparse));
  m.impl("indices", TORCH_FN(at::native::indices_sparse));
  m.impl("values", TORCH_FN(at::native::values_sparse));
  m.impl("_nnz", TORCH_FN(at::native::_nnz_sparse));
  m.impl("sparse_dim", TORCH_FN(at::native::sparse_dim_sparse));
  m.impl("dense_dim", TORCH_FN(at::native::dense_dim_sparse));
  m.impl("_dimI", TORCH_FN(at::native::sparse_dim_sparse));
  m.impl("_dimV", TORCH_FN(at::native::dense_dim_sparse));
  m.impl("is_coalesced", TORCH_FN(at::native::is_coalesced_sparse));
  m.impl("_coalesced_", TORCH_FN(at::native::_coalesced_sparse_));
  m.impl("sparse_resize_", TORCH_FN(at::native::sparse_resize_));
  m.impl("sparse_resize_and_clear_", TORCH_FN(at::native::sparse_resize_and_clear_));
  m.impl("resize_as_sparse_", TORCH_FN(at::native::resize_as_sparse_));
  m.impl("zero_", TORCH_FN(at::native::zero_sparse_));
  m.impl("clone", TORCH_FN(at::native::clone_sparse));
  m.impl("copy_", TORCH_FN(at::native::copy_sparse_wrapper_));
  m.impl("copy_sparse_to_sparse_", TORCH_FN(at::native::copy_sparse_));
  m.impl("_copy_from_and_resize", TORCH_FN(sparse_copy_from_and_resize));
  // Views of a COO tensor are new COO tensors over rearranged indices and values.
  m.impl("permute", TORCH_FN(at::native::permute_sparse_coo));
  m.impl("unsqueeze", TORCH_FN(at::native::unsqueeze_sparse));
  m.impl("view_as_real", TORCH_FN(at::native::view_as_real_sparse));
  m.impl("view_as_complex", TORCH_FN(at::native::view_as_complex_sparse));
  m.impl("_sparse_broadcast_to", TORCH_FN(at::native::sparse_broadcast_to));
}
// LITERALINCLUDE END: SPARSE_REGISTER_STRUCTURE

// LITERALINCLUDE START: SPARSE_REGISTER_COMPUTE
// Every other operator on a sparse COO openreg tensor computes: it runs the
// CPU's sparse kernel on copies. A dense openreg tensor becomes sparse on the
// CPU too (_to_sparse.sparse_dim reaches the dense fallback; _to_sparse checks
// its layout argument first).
TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&sparse_cpu_fallback>());
}
TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  m.impl("_to_sparse", torch::CppFunction::makeFromBoxedFunction<&to_sparse_layout>());
}
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_to_sparse", torch::CppFunction::makeFromBoxedFunction<&to_sparse_layout>());
}
// LITERALINCLUDE END: SPARSE_REGISTER_COMPUTE

// LITERALINCLUDE START: SPARSE_REGISTER_COMPRESSED
// The compressed layouts (CSR, CSC, BSR, BSC) dispatch on SparseCsrPrivateUse1
// and are refused there. Their constructors are composites that would build
// one without reaching that fallback: they are refused by name, at
// SparseCsrPrivateUse1 (a layout among the options) and at PrivateUse1 (the
// dense parts alone), as are the conversions to them. No compressed tensor is
// ever made on openreg.
TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&compressed_not_supported>());
}
TORCH_LIBRARY_IMPL(aten, SparseCsrPrivateUse1, m) {
  for (const char* name : kCompressedConstructors) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&compressed_not_supported>());
  }
  m.impl("_sparse_compressed_tensor_with_dims",
         torch::CppFunction::makeFromBoxedFunction<&compressed_not_supported>());
}
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* name : kCompressedConstructors) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&compressed_not_supported>());
  }
  for (const char* name : kCompressedConversions) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&compressed_not_supported>());
  }
}
TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  for (const char* name : kCompressedConversions) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&compressed_not_supported>());
  }
}
// LITERALINCLUDE END: SPARSE_REGISTER_COMPRESSED

// LITERALINCLUDE START: SPARSE_REGISTER_BY_NAME
// Operators with a SparseCPU kernel and a composite (sum, mv, abs, isinf)
// get the sparse fallback by name (fallback_by_name, Fallback.h). Run once
// the blocks above have registered (they come first in this file).
namespace {
const int kSparseByName = fallback_by_name<&sparse_cpu_fallback>(
    c10::DispatchKey::SparsePrivateUse1, c10::DispatchKey::SparseCPU);
}  // namespace
// LITERALINCLUDE END: SPARSE_REGISTER_BY_NAME

}  // namespace at::native::openreg

// Sparse.h: sparse COO tensors on openreg, and the refusal of the compressed sparse layouts.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>

namespace at::native::openreg {

// The fallback of the SparsePrivateUse1 key: an operator on a sparse COO
// openreg tensor runs the CPU's sparse kernel on CPU copies of its operands,
// counted and warned about like the dense fallback.
void sparse_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// _sparse_coo_tensor_with_dims_and_tensors, the one way a COO tensor is made
// from indices and values: PyTorch's kernel, then a bounds check of the
// indices that PyTorch makes only under check_sparse_tensor_invariants.
at::Tensor sparse_coo_from_parts(int64_t sparse_dim, int64_t dense_dim, c10::SymIntArrayRef size,
                                 const at::Tensor& indices, const at::Tensor& values,
                                 std::optional<c10::ScalarType> dtype,
                                 std::optional<c10::Layout> layout,
                                 std::optional<c10::Device> device, std::optional<bool> pin_memory,
                                 std::optional<bool> is_coalesced);

// The CPU fallback writes a sparse result back into the openreg tensor an
// operator mutates: a sparse copy, which moves indices and values.
at::Tensor sparse_copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst);

// _to_sparse(layout=...): a COO target runs on the CPU (CPU or SparseCPU key,
// as the operand is dense or sparse) and comes back; a compressed one is refused.
void to_sparse_layout(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                      torch::jit::Stack* stack);

// The kernel behind every operator on a compressed sparse tensor (CSR, CSC,
// BSR, BSC) and every conversion to one: one clear error naming the operator
// and the layout, instead of the dispatcher's dump of every backend.
void compressed_not_supported(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace at::native::openreg

// Sparse.cpp: sparse COO operators run on the CPU; compressed layouts are refused with one clear error.
#include "Sparse.h"

#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors_native.h>
#include <ATen/ops/_validate_sparse_coo_tensor_args.h>
#include <c10/util/Exception.h>

#include "Fallback.h"

#include <optional>
#include <string>

namespace at::native::openreg {

namespace {
bool is_compressed(c10::Layout layout) {
  return layout == c10::kSparseCsr || layout == c10::kSparseCsc || layout == c10::kSparseBsr ||
         layout == c10::kSparseBsc;
}

// The compressed layout a call meets: a tensor argument of that layout, a
// layout argument, or the layout in the operator's name.
std::optional<c10::Layout> compressed_layout(const c10::FunctionSchema& schema,
                                             const torch::jit::Stack& stack) {
  const size_t first = stack.size() - schema.arguments().size();
  for (size_t i = first; i < stack.size(); ++i) {
    const c10::IValue& v = stack[i];
    if (v.isTensor() && v.toTensor().defined() && is_compressed(v.toTensor().layout())) {
      return v.toTensor().layout();
    }
    if (schema.arguments()[i - first].name() == "layout" && v.isInt() &&
        is_compressed(v.toLayout())) {
      return v.toLayout();
    }
  }
  // A constructor or conversion names its layout: _to_sparse_csr, _sparse_bsc_tensor_unsafe.
  const std::pair<const char*, c10::Layout> named[] = {{"_csr", c10::kSparseCsr},
                                                       {"_csc", c10::kSparseCsc},
                                                       {"_bsr", c10::kSparseBsr},
                                                       {"_bsc", c10::kSparseBsc}};
  for (const auto& [part, layout] : named) {
    if (schema.name().find(part) != std::string::npos) return layout;
  }
  return std::nullopt;
}

const char* layout_name(c10::Layout layout) {
  switch (layout) {
    case c10::kSparseCsr: return "torch.sparse_csr";
    case c10::kSparseCsc: return "torch.sparse_csc";
    case c10::kSparseBsr: return "torch.sparse_bsr";
    case c10::kSparseBsc: return "torch.sparse_bsc";
    default: return "torch.sparse_coo";
  }
}
}  // namespace

// LITERALINCLUDE START: SPARSE_CHECKED_INDICES
at::Tensor sparse_coo_from_parts(int64_t sparse_dim, int64_t dense_dim, c10::SymIntArrayRef size,
                                 const at::Tensor& indices, const at::Tensor& values,
                                 std::optional<c10::ScalarType> dtype,
                                 std::optional<c10::Layout> layout,
                                 std::optional<c10::Device> device, std::optional<bool> pin_memory,
                                 std::optional<bool> is_coalesced) {
  at::Tensor made = at::native::new_with_dims_and_tensor_sparse_symint(
      sparse_dim, dense_dim, size, indices, values, dtype, layout, device, pin_memory,
      is_coalesced);
  // The CPU kernels the fallback runs trust the indices: one out of bounds
  // writes outside a CPU buffer and corrupts the process. Checking here, where
  // every openreg COO tensor is made, turns a bad index into an error at the
  // call that made it (two reductions on the device and a copy of their results).
  at::_validate_sparse_coo_tensor_args(made._indices(), made._values(), made.sizes());
  return made;
}
// LITERALINCLUDE END: SPARSE_CHECKED_INDICES

at::Tensor sparse_copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  at::Tensor out = dst;
  return out.copy_(self);
}

// LITERALINCLUDE START: SPARSE_FALLBACK_KERNEL
void sparse_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  run_on_cpu(op, stack, c10::DispatchKey::SparseCPU);
}

void to_sparse_layout(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                      torch::jit::Stack* stack) {
  if (compressed_layout(op.schema(), *stack).has_value()) {
    return compressed_not_supported(op, stack);
  }
  bool sparse = keys.has(c10::DispatchKey::SparsePrivateUse1);
  run_on_cpu(op, stack, sparse ? c10::DispatchKey::SparseCPU : c10::DispatchKey::CPU);
}
// LITERALINCLUDE END: SPARSE_FALLBACK_KERNEL

// LITERALINCLUDE START: SPARSE_REFUSAL
void compressed_not_supported(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  c10::Layout layout = compressed_layout(schema, *stack).value_or(c10::kSparseCsr);
  TORCH_CHECK_NOT_IMPLEMENTED(false, "'", display_name(schema), "' is not supported for layout ",
                              layout_name(layout),
                              " on openreg: openreg implements the strided and sparse COO "
                              "(torch.sparse_coo) layouts only. Keep compressed sparse tensors "
                              "on the CPU, or use .to_sparse_coo() before moving them to openreg.");
}
// LITERALINCLUDE END: SPARSE_REFUSAL

}  // namespace at::native::openreg

// Sparse.cpp: sparse tensors on openreg are refused with one clear error.
#include "Sparse.h"

#include <c10/util/Exception.h>

#include <string>

namespace at::native::openreg {

namespace {
std::string layout_of(const std::string& op, c10::DispatchKeySet keys,
                      const torch::jit::Stack& stack, size_t first) {
  for (size_t i = first; i < stack.size(); ++i) {
    if (stack[i].isTensor() && stack[i].toTensor().defined() &&
        stack[i].toTensor().layout() != c10::kStrided) {
      switch (stack[i].toTensor().layout()) {
        case c10::kSparse: return "torch.sparse_coo";
        case c10::kSparseCsr: return "torch.sparse_csr";
        case c10::kSparseCsc: return "torch.sparse_csc";
        case c10::kSparseBsr: return "torch.sparse_bsr";
        case c10::kSparseBsc: return "torch.sparse_bsc";
        default: return "non-strided";
      }
    }
  }
  // A conversion from the strided layout: the target is in the operator's name.
  for (const char* target : {"csr", "csc", "bsr", "bsc"}) {
    if (op.find(std::string("_to_sparse_") + target) != std::string::npos) {
      return std::string("torch.sparse_") + target;
    }
  }
  return keys.has(c10::DispatchKey::SparseCsrPrivateUse1) ? "torch.sparse_csr" : "torch.sparse_coo";
}
}  // namespace

// LITERALINCLUDE START: SPARSE_REFUSAL
void sparse_not_supported(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                          torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  std::string name =
      schema.overload_name().empty() ? schema.name() : schema.name() + "." + schema.overload_name();
  std::string layout = layout_of(name, keys, *stack, stack->size() - schema.arguments().size());
  TORCH_CHECK_NOT_IMPLEMENTED(false, "'", name, "' is not supported for sparse tensors (layout ",
                              layout,
                              ") on openreg: openreg implements the strided layout only. "
                              "Keep sparse tensors on the CPU, or call .to_dense() on the CPU "
                              "before moving them to openreg.");
}
// LITERALINCLUDE END: SPARSE_REFUSAL

}  // namespace at::native::openreg

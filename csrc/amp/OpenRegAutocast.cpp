// OpenRegAutocast.cpp: autocast on openreg, with the casting policies CUDA uses.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace at::native::openreg {

namespace {
// CUDA refuses binary_cross_entropy under autocast: in float16 its log()
// underflows. The message is CUDA's, so users meet the same advice.
at::Tensor binary_cross_entropy_banned(const at::Tensor&, const at::Tensor&,
                                       const std::optional<at::Tensor>&, int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
              "autocast.\n"
              "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
              "In this case, combine the two layers using "
              "torch.nn.functional.binary_cross_entropy_with_logits\n"
              "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and "
              "BCEWithLogits are\n"
              "safe to autocast.");
}
}  // namespace

// LITERALINCLUDE START: AMP_AUTOCAST_FALLTHROUGH
// Operators without a policy run unchanged: the autocast key passes them on.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }
// LITERALINCLUDE END: AMP_AUTOCAST_FALLTHROUGH

// LITERALINCLUDE START: AMP_AUTOCAST_POLICY_TABLE
// The one table: each of PyTorch's operator lists (ATen/autocast_mode.h, the
// lists CUDA registers) with the cast policy its operators get. A list grows
// with PyTorch, and openreg follows without an edit here.
#define OPENREG_AUTOCAST_POLICIES(_)                  \
  _(AT_FORALL_LOWER_PRECISION_FP, lower_precision_fp) \
  _(AT_FORALL_FP32, fp32)                             \
  _(AT_FORALL_FP32_SET_OPT_DTYPE, fp32_set_opt_dtype) \
  _(AT_FORALL_PROMOTE, promote)

// One row registers every operator of its list: an entry is (op) or
// (op, overload), and the policy is appended.
#define OPENREG_AUTOCAST_KERNEL_lower_precision_fp(...) \
  KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define OPENREG_AUTOCAST_KERNEL_fp32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define OPENREG_AUTOCAST_KERNEL_fp32_set_opt_dtype(...) \
  KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define OPENREG_AUTOCAST_KERNEL_promote(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
#define OPENREG_AUTOCAST_REGISTER_LIST(LIST, POLICY) LIST(OPENREG_AUTOCAST_KERNEL_##POLICY)

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  OPENREG_AUTOCAST_POLICIES(OPENREG_AUTOCAST_REGISTER_LIST)
  // norm's overloads without a dtype argument redispatch to the overload that
  // has one, asking for float32 (the fp32_append_dtype policy).
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"), TORCH_FN(binary_cross_entropy_banned));
}
// LITERALINCLUDE END: AMP_AUTOCAST_POLICY_TABLE

}  // namespace at::native::openreg

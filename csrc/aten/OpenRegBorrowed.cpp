// OpenRegBorrowed.cpp: registers PyTorch's CPU kernels, run on device memory, for many operators.
#include <torch/library.h>

#include <string>

#include "native/Borrowed.h"
#include "native/Fallback.h"

namespace at::native::openreg {

namespace {
// Functional, in-place and out= overloads of common operators: what models
// use, and what keeps them off the CPU fallback. Views are not here (they
// must alias, see OpenRegMinimal.cpp), nor random operators (they draw from
// the openreg generator, see native/Random.cpp), nor the overloads with a
// kernel of their own (OpenRegPointwise.cpp, OpenRegReduce.cpp, ...): those
// call the borrowed kernel themselves for the cases they leave to PyTorch.
constexpr const char* kBorrowed[] = {
    // elementwise, unary
    "neg_",
    "neg.out",
    "exp_",
    "exp.out",
    "exp2",
    "exp2.out",
    "expm1",
    "expm1.out",
    "log_",
    "log.out",
    "log2",
    "log2.out",
    "log10",
    "log10.out",
    "log1p",
    "log1p.out",
    "sqrt_",
    "sqrt.out",
    "rsqrt_",
    "rsqrt.out",
    "sin_",
    "sin.out",
    "cos_",
    "cos.out",
    "tan",
    "tan.out",
    "tanh_",
    "tanh.out",
    "sigmoid_",
    "sigmoid.out",
    "sign",
    "sign.out",
    "reciprocal",
    "reciprocal.out",
    "floor",
    "floor.out",
    "ceil",
    "ceil.out",
    "round",
    "round.out",
    "trunc",
    "trunc.out",
    "erf",
    "erf.out",
    "erfinv",
    "erfinv.out",
    "asin",
    "asin.out",
    "acos",
    "acos.out",
    "atan",
    "atan.out",
    "sinh",
    "sinh.out",
    "cosh",
    "cosh.out",
    "logical_not",
    "logical_not.out",
    "bitwise_not",
    "bitwise_not.out",
    "isnan",
    "isinf",
    "isneginf",
    "isneginf.out",
    "isposinf",
    "isposinf.out",
    "nan_to_num",
    "nan_to_num.out",
    // activations and their gradients
    "gelu",
    "gelu_",
    "gelu.out",
    "gelu_backward",
    "gelu_backward.grad_input",
    "silu_",
    "silu.out",
    "silu_backward",
    "silu_backward.grad_input",
    "hardtanh",
    "hardtanh_",
    "hardtanh.out",
    "hardtanh_backward",
    "leaky_relu_",
    "leaky_relu.out",
    "leaky_relu_backward",
    "elu",
    "elu_",
    "elu.out",
    "elu_backward",
    "softplus",
    "softplus.out",
    "softplus_backward",
    "hardswish",
    "hardswish_",
    "hardswish.out",
    "hardswish_backward",
    "hardsigmoid",
    "hardsigmoid.out",
    "hardsigmoid_backward",
    "mish",
    "mish_",
    "mish.out",
    "mish_backward",
    "threshold",
    "threshold_",
    "threshold.out",
    "threshold_backward.grad_input",
    "tanh_backward",
    "tanh_backward.grad_input",
    "sigmoid_backward",
    "sigmoid_backward.grad_input",
    // elementwise, binary and ternary
    "pow.Tensor_Tensor",
    "pow_.Scalar",
    "pow.Tensor_Scalar_out",
    "pow.Tensor_Tensor_out",
    "atan2",
    "atan2.out",
    "remainder.Tensor",
    "remainder.Tensor_out",
    "fmod.Tensor",
    "fmod.Tensor_out",
    "maximum.out",
    "minimum.out",
    "div.Tensor_mode",
    "div_.Tensor_mode",
    "div.out_mode",
    "floor_divide",
    "floor_divide.out",
    "eq.Tensor_out",
    "eq.Scalar_out",
    "ne.Tensor_out",
    "ne.Scalar_out",
    "lt.Tensor_out",
    "lt.Scalar_out",
    "le.Tensor_out",
    "le.Scalar_out",
    "gt.Tensor_out",
    "gt.Scalar_out",
    "ge.Tensor_out",
    "ge.Scalar_out",
    "logical_and",
    "logical_and.out",
    "logical_or",
    "logical_or.out",
    "bitwise_and.Tensor",
    "bitwise_and.Tensor_out",
    "bitwise_or.Tensor",
    "bitwise_or.Tensor_out",
    "where.self",
    "where.self_out",
    "clamp_",
    "clamp.out",
    "clamp.Tensor",
    "clamp.Tensor_out",
    "clamp_min",
    "clamp_min_",
    "clamp_min.out",
    "clamp_max",
    "clamp_max_",
    "clamp_max.out",
    "lerp.Scalar",
    "lerp.Scalar_out",
    "addcmul",
    "addcmul.out",
    "addcdiv",
    "addcdiv.out",
    // reductions, scans, sorting
    "sum.IntList_out",
    "mean.out",
    "amax.out",
    "amin.out",
    "max.dim",
    "max.dim_max",
    "min.dim",
    "min.dim_min",
    "max",
    "min",
    "argmax.out",
    "argmin.out",
    "prod",
    "prod.dim_int",
    "prod.int_out",
    "var.correction",
    "var.correction_out",
    "std.correction",
    "std.correction_out",
    "var_mean.correction",
    "std_mean.correction",
    "linalg_vector_norm.out",
    "linalg_lu_solve",
    "all.dim",
    "all.all_out",
    "any.dim",
    "any.all_out",
    "cumsum.out",
    "cumprod",
    "cumprod.out",
    "sort.stable",
    "sort.values_stable",
    "topk",
    "topk.values",
    "logsumexp",
    "logsumexp.out",
    // outputs whose shapes depend on the data: run, waited for (see run_and_wait)
    "nonzero.out",
    "masked_select.out",
    "_unique",
    "_unique2",
    "unique_dim",
    "unique_consecutive",
    "unique_dim_consecutive",
    "bincount",
    "repeat_interleave.Tensor",
    "histc",
    // no Meta kernel in PyTorch: also run and waited for
    "equal",
    "_aminmax",
    "_aminmax.dim",
    "_cummin_helper",
    "_logcumsumexp",
    "_logcumsumexp.out",
    "_masked_softmax",
    "_masked_softmax_backward",
    "batch_norm_update_stats",
    "histogram.bin_ct",
    "histogram.bins_tensor",
    "histogram.bin_ct_out",
    "histogram.bins_tensor_out",
    "_histogramdd_bin_edges",
    "_histogramdd_from_bin_cts",
    "_histogramdd_from_bin_tensors",
    "multi_margin_loss_backward",
    "multilabel_margin_loss_backward",
    "glu_jvp",
    "glu_backward_jvp",
    "_add_relu.Scalar",
    "_add_relu.out",
    "adaptive_avg_pool2d.out",
    "_native_batch_norm_legit.out",
    "_native_batch_norm_legit.no_stats_out",
    // softmax
    "_softmax",
    "_softmax.out",
    "_log_softmax",
    "_log_softmax.out",
    "_softmax_backward_data",
    "_softmax_backward_data.out",
    "_log_softmax_backward_data",
    "_log_softmax_backward_data.out",
    // matrix products
    "addmv",
    "addmv.out",
    "mv",
    "dot",
    // composite out= overloads that accept only the CPU, CUDA and XPU
    // (torch.mode(x, out=...): "mode only supports CPU, CUDA and XPU")
    "mode.values",
    // padding: the functional overloads too, so that the result takes the
    // layout the CPU kernel gives it (channels-last in, channels-last out);
    // PyTorch's generic wrapper would allocate it contiguous first
    "replication_pad1d",
    "replication_pad2d",
    "replication_pad3d",
    "reflection_pad1d",
    "reflection_pad2d",
    "reflection_pad3d",
    // pooling
    "max_pool2d_with_indices",
    "max_pool2d_with_indices.out",
    "max_pool2d_with_indices_backward",
    "max_pool2d_with_indices_backward.grad_input",
    "avg_pool2d",
    "avg_pool2d.out",
    "avg_pool2d_backward",
    "avg_pool2d_backward.grad_input",
    "_adaptive_avg_pool2d",
    "_adaptive_avg_pool2d_backward",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_backward",
    // losses
    "nll_loss_forward",
    "nll_loss_forward.output",
    "nll_loss_backward",
    "nll_loss_backward.grad_input",
    "nll_loss2d_forward",
    "nll_loss2d_backward",
    "mse_loss.out",
    "mse_loss_backward",
    "mse_loss_backward.grad_input",
    "binary_cross_entropy",
    "binary_cross_entropy_backward",
    "smooth_l1_loss",
    "smooth_l1_loss_backward",
    "huber_loss",
    "huber_loss_backward",
    // normalization
    "native_layer_norm",
    "native_layer_norm_backward",
    "native_batch_norm",
    "native_batch_norm_backward",
    "_native_batch_norm_legit",
    "_native_batch_norm_legit.no_stats",
    "native_group_norm",
    "native_group_norm_backward",
    // indexing, gathering, scattering, joining
    "index.Tensor_out",
    "_index_put_impl_",
    "index_select.out",
    "gather.out",
    "scatter.src",
    "scatter_.src",
    "scatter.value",
    "scatter_.value",
    "scatter_add",
    "scatter_add_",
    "scatter_reduce.two",
    "scatter_reduce_.two",
    "index_add",
    "index_add_",
    "index_add.out",
    "masked_fill_.Scalar",
    "masked_fill_.Tensor",
    "masked_scatter_",
    "embedding_dense_backward",
    "cat.out",
    "tril",
    "tril_",
    "tril.out",
    "triu",
    "triu_",
    "triu.out",
    "flip",
    "roll",
    "repeat",
    "arange.start_out",
    "linspace.out",
    "_foreach_add.List",
    "_foreach_add.Scalar",
    "_foreach_mul.Scalar",
    "_foreach_mul.List",
    "_foreach_sqrt",
    "_foreach_neg",
};
}  // namespace

// LITERALINCLUDE START: BORROWED_REGISTER
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* name : kBorrowed) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&borrowed_kernel>());
  }
}
// LITERALINCLUDE END: BORROWED_REGISTER

// LITERALINCLUDE START: BORROWED_REMAINING_OPERATORS
// Every other ATen operator that has a CPU kernel and a Meta kernel, and no
// kernel for openreg (its own, borrowed above, or a composite one), borrows
// its CPU kernel too, unless the fallback's rules refuse it (views, random
// operators, factories). Done once the whole library is registered (at
// import), so the operators above and the hand-written kernels are known.
int borrow_remaining_operators() {
  static const int registered = [] {
    auto* lib = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1,
                                   __FILE__, __LINE__);  // kept for the process's life
    using c10::DispatchKey;
    int count = 0;
    for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames()) {
      if (name.name.rfind("aten::", 0) != 0) continue;
      // Quantizing operators return quantized tensors, which have no strided
      // openreg layout to borrow into: they stay with the fallback's clear error.
      if (name.name.find("quantize") != std::string::npos) continue;
      auto op = c10::Dispatcher::singleton().findOp(name);
      if (!op.has_value() || !op->hasSchema()) continue;
      bool served =
          op->hasKernelForDispatchKey(DispatchKey::PrivateUse1) ||
          op->hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd) ||
          op->hasKernelForDispatchKey(DispatchKey::CompositeExplicitAutograd) ||
          op->hasKernelForDispatchKey(DispatchKey::CompositeExplicitAutogradNonFunctional);
      if (served || !op->hasKernelForDispatchKey(DispatchKey::CPU) ||
          !op->hasKernelForDispatchKey(DispatchKey::Meta) ||
          !why_no_fallback(op->schema()).empty()) {
        continue;
      }
      std::string qualified = name.name.substr(6);
      if (!name.overload_name.empty()) qualified += "." + name.overload_name;
      lib->impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<&borrowed_kernel>());
      ++count;
    }
    return count;
  }();
  return registered;
}
// LITERALINCLUDE END: BORROWED_REMAINING_OPERATORS

}  // namespace at::native::openreg

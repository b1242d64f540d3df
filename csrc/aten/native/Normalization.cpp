// Normalization.cpp: layer norm's forward and backward written straight into the planned results.
// It calls PyTorch's LayerNormKernel dispatch stubs: csrc/CMakeLists.txt defines the CPU
// capability macros those calls need.

#include <ATen/core/ivalue.h>
#include <ATen/native/layer_norm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>

#include "Normalization.h"

namespace at::native::openreg {

namespace {

at::Tensor optional_tensor(const c10::IValue& v) {
  return v.isNone() ? at::Tensor() : v.toTensor();
}

// Writers hand PyTorch's compute routines dense memory of one dtype; anything
// else (mixed precision parameters, strided results) takes the usual path.
bool dense_where_defined(std::initializer_list<at::Tensor> results) {
  for (const at::Tensor& t : results) {
    if (t.defined() && !t.is_contiguous()) return false;
  }
  return true;
}

bool one_dtype(const at::Tensor& x, std::initializer_list<at::Tensor> params) {
  for (const at::Tensor& p : params) {
    if (p.defined() && p.scalar_type() != x.scalar_type()) return false;
  }
  return true;
}
}  // namespace

// LITERALINCLUDE START: NORMALIZATION_FORWARD_WRITER
// native_layer_norm(input, normalized_shape, weight?, bias?, eps) -> (out, mean, rstd).
// The Meta kernel planned the results: out like the input, mean and rstd of
// the statistics' shape, all dense. PyTorch's CPU compute routine
// (LayerNormKernel, the one layer_norm_cpu calls after allocating) fills them.
bool layer_norm_writer(const torch::jit::Stack& args, const torch::jit::Stack& outs) {
  at::Tensor x = args[0].toTensor().contiguous();
  std::vector<int64_t> shape = args[1].toIntVector();
  at::Tensor weight = optional_tensor(args[2]), bias = optional_tensor(args[3]);
  double eps = args[4].toDouble();
  at::Tensor out = outs[0].toTensor(), mean = outs[1].toTensor(), rstd = outs[2].toTensor();
  if (!one_dtype(x, {weight, bias, mean, rstd}) || !dense_where_defined({out, mean, rstd})) {
    return false;
  }
  auto [M, N] = at::native::_check_layer_norm_inputs(x, shape, weight, bias);
  if (M <= 0) return true;
  at::native::LayerNormKernel(c10::kCPU, x, weight.defined() ? weight.contiguous() : weight,
                              bias.defined() ? bias.contiguous() : bias, M, N, eps, &out, &mean,
                              &rstd);
  return true;
}
// LITERALINCLUDE END: NORMALIZATION_FORWARD_WRITER

// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight?, bias?,
// output_mask) -> (grad_input, grad_weight, grad_bias); a result not asked for is undefined.
bool layer_norm_backward_writer(const torch::jit::Stack& args, const torch::jit::Stack& outs) {
  at::Tensor dy = args[0].toTensor().contiguous(), x = args[1].toTensor().contiguous();
  std::vector<int64_t> shape = args[2].toIntVector();
  at::Tensor mean = args[3].toTensor().contiguous(), rstd = args[4].toTensor().contiguous();
  at::Tensor weight = optional_tensor(args[5]), bias = optional_tensor(args[6]);
  at::Tensor dx = optional_tensor(outs[0]), dweight = optional_tensor(outs[1]),
             dbias = optional_tensor(outs[2]);
  if (!one_dtype(x, {dy, weight, bias, mean, rstd}) || !dense_where_defined({dx, dweight, dbias})) {
    return false;
  }
  auto [M, N] = at::native::_check_layer_norm_inputs(x, shape, weight, bias);
  if (M <= 0 || N <= 0) {  // nothing to reduce: the parameters' gradients are zero
    if (dweight.defined()) dweight.zero_();
    if (dbias.defined()) dbias.zero_();
    return true;
  }
  at::native::LayerNormBackwardKernel(c10::kCPU, dy, x, mean, rstd,
                                      weight.defined() ? weight.contiguous() : weight, M, N, &dx,
                                      &dweight, &dbias);
  return true;
}

}  // namespace at::native::openreg

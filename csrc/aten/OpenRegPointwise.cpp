// OpenRegPointwise.cpp: registers the pointwise operators with a short host path (native/Pointwise.h).
#include <ATen/ops/_foreach_add_ops.h>
#include <ATen/ops/_foreach_addcdiv_ops.h>
#include <ATen/ops/_foreach_addcmul_ops.h>
#include <ATen/ops/_foreach_div_ops.h>
#include <ATen/ops/_foreach_lerp_ops.h>
#include <ATen/ops/_foreach_mul_ops.h>
#include <ATen/ops/_foreach_sqrt_ops.h>
#include <ATen/ops/addcdiv_ops.h>
#include <ATen/ops/addcmul_ops.h>
#include <ATen/ops/clamp_ops.h>
#include <ATen/ops/cos_ops.h>
#include <ATen/ops/exp_ops.h>
#include <ATen/ops/leaky_relu_ops.h>
#include <ATen/ops/lerp_ops.h>
#include <ATen/ops/log_ops.h>
#include <ATen/ops/maximum_ops.h>
#include <ATen/ops/minimum_ops.h>
#include <ATen/ops/pow_ops.h>
#include <ATen/ops/rsqrt_ops.h>
#include <ATen/ops/sigmoid_ops.h>
#include <ATen/ops/silu_ops.h>
#include <ATen/ops/sin_ops.h>
#include <ATen/ops/sqrt_ops.h>
#include <ATen/ops/tanh_ops.h>
#include <ATen/ops/threshold_backward_ops.h>
#include <torch/library.h>

#include "native/Pointwise.h"

namespace at::native::openreg {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  namespace ops = at::_ops;
  // The result has the operands' dtype.
  m.impl("neg", TORCH_FN((Functional<ops::neg, ops::neg_out, false>::call)));
  m.impl("abs", TORCH_FN((Functional<ops::abs, ops::abs_out, false>::call)));
  m.impl("sigmoid", TORCH_FN((Functional<ops::sigmoid, ops::sigmoid_out, false>::call)));
  m.impl("silu", TORCH_FN((Functional<ops::silu, ops::silu_out, false>::call)));
  m.impl("tanh", TORCH_FN((Functional<ops::tanh, ops::tanh_out, false>::call)));
  m.impl("exp", TORCH_FN((Functional<ops::exp, ops::exp_out, false>::call)));
  m.impl("log", TORCH_FN((Functional<ops::log, ops::log_out, false>::call)));
  m.impl("sqrt", TORCH_FN((Functional<ops::sqrt, ops::sqrt_out, false>::call)));
  m.impl("rsqrt", TORCH_FN((Functional<ops::rsqrt, ops::rsqrt_out, false>::call)));
  m.impl("sin", TORCH_FN((Functional<ops::sin, ops::sin_out, false>::call)));
  m.impl("cos", TORCH_FN((Functional<ops::cos, ops::cos_out, false>::call)));
  m.impl("clamp", TORCH_FN((Functional<ops::clamp, ops::clamp_out, false>::call)));
  m.impl("leaky_relu", TORCH_FN((Functional<ops::leaky_relu, ops::leaky_relu_out, false>::call)));
  m.impl("pow.Tensor_Scalar",
         TORCH_FN((Functional<ops::pow_Tensor_Scalar, ops::pow_Tensor_Scalar_out, false>::call)));
  m.impl("maximum", TORCH_FN((Functional<ops::maximum, ops::maximum_out, false>::call)));
  m.impl("minimum", TORCH_FN((Functional<ops::minimum, ops::minimum_out, false>::call)));
  m.impl(
      "threshold_backward",
      TORCH_FN(
          (Functional<ops::threshold_backward, ops::threshold_backward_grad_input, false>::call)));
  // Comparisons: a bool result.
  m.impl("eq.Tensor", TORCH_FN((Functional<ops::eq_Tensor, ops::eq_Tensor_out, true>::call)));
  m.impl("ne.Tensor", TORCH_FN((Functional<ops::ne_Tensor, ops::ne_Tensor_out, true>::call)));
  m.impl("lt.Tensor", TORCH_FN((Functional<ops::lt_Tensor, ops::lt_Tensor_out, true>::call)));
  m.impl("le.Tensor", TORCH_FN((Functional<ops::le_Tensor, ops::le_Tensor_out, true>::call)));
  m.impl("gt.Tensor", TORCH_FN((Functional<ops::gt_Tensor, ops::gt_Tensor_out, true>::call)));
  m.impl("ge.Tensor", TORCH_FN((Functional<ops::ge_Tensor, ops::ge_Tensor_out, true>::call)));
  m.impl("eq.Scalar", TORCH_FN((Functional<ops::eq_Scalar, ops::eq_Scalar_out, true>::call)));
  m.impl("ne.Scalar", TORCH_FN((Functional<ops::ne_Scalar, ops::ne_Scalar_out, true>::call)));
  m.impl("lt.Scalar", TORCH_FN((Functional<ops::lt_Scalar, ops::lt_Scalar_out, true>::call)));
  m.impl("le.Scalar", TORCH_FN((Functional<ops::le_Scalar, ops::le_Scalar_out, true>::call)));
  m.impl("gt.Scalar", TORCH_FN((Functional<ops::gt_Scalar, ops::gt_Scalar_out, true>::call)));
  m.impl("ge.Scalar", TORCH_FN((Functional<ops::ge_Scalar, ops::ge_Scalar_out, true>::call)));
  m.impl("isfinite", TORCH_FN(isfinite));
  // In place.
  m.impl("addcmul_", TORCH_FN(InPlace<ops::addcmul_>::call));
  m.impl("addcdiv_", TORCH_FN(InPlace<ops::addcdiv_>::call));
  m.impl("lerp_.Scalar", TORCH_FN(InPlace<ops::lerp__Scalar>::call));
  // Foreach, in place (the optimizers' steps).
  m.impl("_foreach_add_.List", TORCH_FN(ForEach<ops::_foreach_add__List>::call));
  m.impl("_foreach_add_.Scalar", TORCH_FN(ForEach<ops::_foreach_add__Scalar>::call));
  m.impl("_foreach_mul_.List", TORCH_FN(ForEach<ops::_foreach_mul__List>::call));
  m.impl("_foreach_mul_.Scalar", TORCH_FN(ForEach<ops::_foreach_mul__Scalar>::call));
  m.impl("_foreach_div_.List", TORCH_FN(ForEach<ops::_foreach_div__List>::call));
  m.impl("_foreach_div_.Scalar", TORCH_FN(ForEach<ops::_foreach_div__Scalar>::call));
  m.impl("_foreach_addcmul_.Scalar", TORCH_FN(ForEach<ops::_foreach_addcmul__Scalar>::call));
  m.impl("_foreach_addcdiv_.Scalar", TORCH_FN(ForEach<ops::_foreach_addcdiv__Scalar>::call));
  m.impl("_foreach_lerp_.Scalar", TORCH_FN(ForEach<ops::_foreach_lerp__Scalar>::call));
  m.impl("_foreach_sqrt_", TORCH_FN(ForEach<ops::_foreach_sqrt_>::call));
}

}  // namespace at::native::openreg

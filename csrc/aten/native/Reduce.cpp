// Reduce.cpp: sum and mean over all dimensions or the last one, with a short host path for small tensors.
//
// torch.sum(x) of 1,024 floats is a 1-2 us job on the CPU; through the
// borrowed path (the host plans the call and captures its arguments) it cost
// 3x that, and x.sum(-1) of a 16 x 64 matrix 2.8x. For small contiguous float
// tensors reduced over every dimension or the last one, the host allocates
// the result and queues PyTorch's own CPU reduction on it: the CPU's bits (a
// hand-written loop that summed in double was more exact than the CPU's
// float cascade, and failed OpInfo's exact comparisons of integer inputs'
// float results). Everything else keeps PyTorch's reduction, borrowed.
#include <ATen/ops/mean_ops.h>
#include <ATen/ops/sum_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "../../runtime/OpenRegLaunch.h"
#include "../../runtime/OpenRegStorage.h"
#include "Borrowed.h"
#include "Minimal.h"

namespace at::native::openreg {

namespace {
using c10::openreg::KernelTensor;

// LITERALINCLUDE START: REDUCE_RAW_SUM
constexpr int64_t kShortPathMaxNumel = 32768;  // beyond this, the borrowed path's cost is noise

// A reduction the short path takes: over the last dimension, or over all of
// them, of a small contiguous float or double tensor, in its own dtype.
bool short_reduction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                     std::optional<c10::ScalarType> dtype) {
  c10::openreg::check_storage_fits(self);  // a shrunk storage: PyTorch's usual error
  c10::ScalarType t = self.scalar_type();
  const int64_t ndim = self.dim();
  if (!self.is_contiguous() || self.numel() == 0 || self.numel() > kShortPathMaxNumel ||
      (t != at::kFloat && t != at::kDouble) || (dtype.has_value() && *dtype != t)) {
    return false;
  }
  bool all = !dim.has_value() || dim->empty() || (ndim == 0 && dim->size() == 1 &&
                                                  ((*dim)[0] == 0 || (*dim)[0] == -1));
  bool last = !all && ndim > 0 && dim->size() == 1 && ((*dim)[0] == ndim - 1 || (*dim)[0] == -1);
  return all || last;  // other dimensions, or an out-of-range one: borrowed
}

// The result's shape: `self` reduced over `dim` (all dimensions when empty).
at::DimVector reduced_shape(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  bool all = !dim.has_value() || dim->empty() || self.dim() == 0;
  at::DimVector shape;
  if (all) {
    if (keepdim) shape.assign(self.dim(), 1);  // else a 0-dim result
  } else {
    shape.assign(self.sizes().begin(), self.sizes().end() - 1);
    if (keepdim) shape.push_back(1);
  }
  return shape;
}

// PyTorch's CPU sum or mean, called below autograd, writing into the result.
struct ReduceCall {
  KernelTensor out;
  KernelTensor self;
  std::optional<c10::SmallVector<int64_t, 2>> dim;
  bool keepdim;
  bool mean;

  void operator()() const {
    const c10::DispatchKeySet cpu(c10::DispatchKey::CPU);
    at::Tensor result = out.cpu();
    at::OptionalIntArrayRef dims = dim.has_value() ? at::OptionalIntArrayRef(*dim) : std::nullopt;
    if (mean) {
      at::_ops::mean_out::redispatch(cpu, self.cpu(), dims, keepdim, std::nullopt, result);
    } else {
      at::_ops::sum_IntList_out::redispatch(cpu, self.cpu(), dims, keepdim, std::nullopt, result);
    }
  }
};

// The short path's result, or an undefined tensor when it does not apply.
at::Tensor short_sum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<c10::ScalarType> dtype, bool mean) {
  if (!short_reduction(self, dim, dtype)) return at::Tensor();
  c10::DeviceGuard guard(self.device());
  at::Tensor out = empty_openreg(reduced_shape(self, dim, keepdim), self.scalar_type(),
                                 self.device());
  std::optional<c10::SmallVector<int64_t, 2>> dims;
  if (dim.has_value()) dims.emplace(dim->begin(), dim->end());
  c10::openreg::launch_new_kernel<ReduceCall>(KernelTensor(out), KernelTensor(self),
                                              std::move(dims), keepdim, mean);
  return out;
}

// Everything else: PyTorch's reduction, through the borrowed kernel (which
// also raises PyTorch's errors: integer means, dimensions out of range).
at::Tensor borrowed_reduction(const c10::OperatorHandle& op, const at::Tensor& self,
                              at::OptionalIntArrayRef dim, bool keepdim,
                              std::optional<c10::ScalarType> dtype) {
  torch::jit::Stack args{self, dim.has_value() ? c10::IValue(dim->vec()) : c10::IValue(),
                         keepdim, dtype};
  return call_borrowed(op, std::move(args)).back().toTensor();
}

at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<c10::ScalarType> dtype) {
  at::Tensor out = short_sum(self, dim, keepdim, dtype, /*mean=*/false);
  if (out.defined()) return out;
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::sum", "dim_IntList");
  return borrowed_reduction(op, self, dim, keepdim, dtype);
}

at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype) {
  at::Tensor out = short_sum(self, dim, keepdim, dtype, /*mean=*/true);
  if (out.defined()) return out;
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::mean", "dim");
  return borrowed_reduction(op, self, dim, keepdim, dtype);
}

// The full reductions: one row.
at::Tensor sum(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  return sum_dim(self, std::nullopt, false, dtype);
}

at::Tensor mean(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  return mean_dim(self, std::nullopt, false, dtype);
}
// LITERALINCLUDE END: REDUCE_RAW_SUM
}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sum", TORCH_FN(sum));
  m.impl("mean", TORCH_FN(mean));
  m.impl("sum.dim_IntList", TORCH_FN(sum_dim));
  m.impl("mean.dim", TORCH_FN(mean_dim));
}

}  // namespace at::native::openreg

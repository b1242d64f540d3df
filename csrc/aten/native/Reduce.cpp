// Reduce.cpp: sum and mean over all dimensions or the last one, hand-written for small tensors.
//
// torch.sum(x) of 1,024 floats is a 1-2 us job on the CPU; through the
// borrowed path (the boxed call wraps three tensors and builds a
// TensorIterator) it cost 3x that, and x.sum(-1) of a 16 x 64 matrix 2.8x.
// Small contiguous float tensors get a raw loop; everything else keeps
// PyTorch's reduction, borrowed. mean is the same loop, scaled.
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "../../runtime/OpenRegLaunch.h"
#include "../../runtime/OpenRegStorage.h"
#include "Borrowed.h"
#include "Minimal.h"

namespace at::native::openreg {

namespace {
using c10::openreg::launch_kernel;

// LITERALINCLUDE START: REDUCE_RAW_SUM
// Accumulates in double: for float32 more exact than the CPU's cascade, and
// within float32 rounding of it. Each of `rows` rows of `cols` contiguous
// elements gives one result (a full reduction is one row); scale is 1 for
// sum, 1/cols for mean.
template <typename T>
struct RawRowSumKernel {
  T* out;
  const T* in;
  int64_t rows;
  int64_t cols;
  double scale;

  void operator()() const {
    const T* src = c10::openreg::kernel_pointer(in);
    T* dst = c10::openreg::kernel_pointer(out);
    for (int64_t r = 0; r < rows; ++r, src += cols) {
      double acc[4] = {0, 0, 0, 0};  // four independent chains: the loop vectorizes
      int64_t i = 0;
      for (; i + 4 <= cols; i += 4) {
        for (int k = 0; k < 4; ++k) acc[k] += static_cast<double>(src[i + k]);
      }
      for (; i < cols; ++i) acc[0] += static_cast<double>(src[i]);
      dst[r] = static_cast<T>(((acc[0] + acc[1]) + (acc[2] + acc[3])) * scale);
    }
  }
};

constexpr int64_t kRawKernelMaxNumel = 32768;  // beyond this, PyTorch's parallel reduction wins

// A reduction the raw kernel takes: over the last dimension, or over all of
// them, of a small contiguous float or double tensor, in its own dtype.
struct RowReduction {
  int64_t rows;
  int64_t cols;
  at::DimVector shape;  // the result's
};

std::optional<RowReduction> row_reduction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                          bool keepdim, std::optional<c10::ScalarType> dtype) {
  c10::openreg::check_storage_fits(self);  // a shrunk storage: PyTorch's usual error
  c10::ScalarType t = self.scalar_type();
  const int64_t ndim = self.dim();
  if (!self.is_contiguous() || self.numel() == 0 || self.numel() > kRawKernelMaxNumel ||
      (t != at::kFloat && t != at::kDouble) || (dtype.has_value() && *dtype != t)) {
    return std::nullopt;
  }
  bool all = !dim.has_value() || dim->empty() || (ndim == 0 && dim->size() == 1 &&
                                                  ((*dim)[0] == 0 || (*dim)[0] == -1));
  bool last = !all && ndim > 0 && dim->size() == 1 && ((*dim)[0] == ndim - 1 || (*dim)[0] == -1);
  if (!all && !last) return std::nullopt;  // other dimensions, or an out-of-range one: borrowed
  RowReduction r;
  r.cols = all ? self.numel() : self.size(-1);
  r.rows = self.numel() / r.cols;
  if (all) {
    if (keepdim) r.shape.assign(ndim, 1);  // else a 0-dim result
  } else {
    r.shape.assign(self.sizes().begin(), self.sizes().end() - 1);
    if (keepdim) r.shape.push_back(1);
  }
  return r;
}

// The raw row reduction's result, or an undefined tensor when it does not apply.
at::Tensor raw_sum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<c10::ScalarType> dtype, bool mean) {
  std::optional<RowReduction> r = row_reduction(self, dim, keepdim, dtype);
  if (!r.has_value()) return at::Tensor();
  c10::DeviceGuard guard(self.device());
  at::Tensor out = empty_openreg(r->shape, self.scalar_type(), self.device());
  double scale = mean ? 1.0 / static_cast<double>(r->cols) : 1.0;
  if (self.scalar_type() == at::kFloat) {
    launch_kernel(RawRowSumKernel<float>{out.mutable_data_ptr<float>(),
                                         self.const_data_ptr<float>(), r->rows, r->cols, scale});
  } else {
    launch_kernel(RawRowSumKernel<double>{out.mutable_data_ptr<double>(),
                                          self.const_data_ptr<double>(), r->rows, r->cols, scale});
  }
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
  at::Tensor out = raw_sum(self, dim, keepdim, dtype, /*mean=*/false);
  if (out.defined()) return out;
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::sum", "dim_IntList");
  return borrowed_reduction(op, self, dim, keepdim, dtype);
}

at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype) {
  at::Tensor out = raw_sum(self, dim, keepdim, dtype, /*mean=*/true);
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

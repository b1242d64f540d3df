// Reduce.cpp: the full sum and mean on the device, hand-written for small tensors.
//
// torch.sum(x) of 1,024 floats is a 1-2 us job on the CPU; through the
// borrowed path (the composite sum calls sum.dim_IntList, whose boxed call
// wraps three tensors and builds a TensorIterator) it cost 3x that. Small
// contiguous float tensors get a raw loop; everything else keeps PyTorch's
// reduction, borrowed. torch.mean(x) is the same loop, scaled by 1/n.
#include <ATen/ops/mean.h>
#include <ATen/ops/sum.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "../../runtime/OpenRegLaunch.h"
#include "../../runtime/OpenRegStorage.h"
#include "Minimal.h"

namespace at::native::openreg {

namespace {
using c10::openreg::launch_kernel;

// LITERALINCLUDE START: REDUCE_RAW_SUM
// Accumulates in double: for float32 more exact than the CPU's cascade, and
// within float32 rounding of it. scale is 1 for sum, 1/n for mean.
template <typename T>
struct RawSumKernel {
  T* out;
  const T* in;
  int64_t n;
  double scale;

  void operator()() const {
    const T* src = c10::openreg::kernel_pointer(in);
    double acc[4] = {0, 0, 0, 0};  // four independent chains: the loop vectorizes
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      for (int k = 0; k < 4; ++k) acc[k] += static_cast<double>(src[i + k]);
    }
    for (; i < n; ++i) acc[0] += static_cast<double>(src[i]);
    double total = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    *c10::openreg::kernel_pointer(out) = static_cast<T>(total * scale);
  }
};

constexpr int64_t kRawKernelMaxNumel = 32768;  // beyond this, PyTorch's parallel reduction wins

// The result of a raw full reduction, or an undefined tensor when the input is
// not small, contiguous, float or double in the requested dtype.
at::Tensor raw_full_sum(const at::Tensor& self, std::optional<c10::ScalarType> dtype,
                        bool mean) {
  c10::openreg::check_storage_fits(self);  // a shrunk storage: PyTorch's usual error
  c10::ScalarType t = self.scalar_type();
  bool raw = self.is_contiguous() && self.numel() > 0 && self.numel() <= kRawKernelMaxNumel &&
             (t == at::kFloat || t == at::kDouble) && (!dtype.has_value() || *dtype == t);
  if (!raw) return at::Tensor();
  c10::DeviceGuard guard(self.device());
  at::Tensor out = empty_openreg({}, t, self.device());
  double scale = mean ? 1.0 / static_cast<double>(self.numel()) : 1.0;
  if (t == at::kFloat) {
    launch_kernel(RawSumKernel<float>{out.mutable_data_ptr<float>(), self.const_data_ptr<float>(),
                                      self.numel(), scale});
  } else {
    launch_kernel(RawSumKernel<double>{out.mutable_data_ptr<double>(),
                                       self.const_data_ptr<double>(), self.numel(), scale});
  }
  return out;
}

at::Tensor sum(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  at::Tensor out = raw_full_sum(self, dtype, /*mean=*/false);
  if (out.defined()) return out;
  return at::sum(self, at::OptionalIntArrayRef(at::IntArrayRef{}), false, dtype);
}

at::Tensor mean(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  at::Tensor out = raw_full_sum(self, dtype, /*mean=*/true);
  if (out.defined()) return out;
  return at::mean(self, at::OptionalIntArrayRef(at::IntArrayRef{}), false, dtype);
}
// LITERALINCLUDE END: REDUCE_RAW_SUM
}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sum", TORCH_FN(sum));
  m.impl("mean", TORCH_FN(mean));
}

}  // namespace at::native::openreg

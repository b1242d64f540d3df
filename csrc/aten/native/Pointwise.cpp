// Pointwise.cpp: isfinite on the device, one pass over the raw bits.
#include "Pointwise.h"

#include <ATen/ops/isfinite_ops.h>

#include <cstdint>

namespace at::native::openreg {

using c10::openreg::kParallelElements;

// isfinite: PyTorch composes it of four operators (x == x, abs, != inf, and),
// each a pass over memory with a temporary. A value is finite when its
// exponent bits are not all ones, so one branch-free pass over the raw bits,
// which the compiler vectorizes (at the machine's width:
// OPENREG_VECTOR_CLONES), answers it.
template <class Bits, Bits kExponent>
struct IsFiniteKernel {
  const void* in;
  bool* out;
  int64_t n;
  void operator()() const {
    const auto* x = c10::openreg::kernel_pointer(static_cast<const Bits*>(in));
    bool* y = c10::openreg::kernel_pointer(out);
    c10::openreg::kernel_parallel_for(0, n, kParallelElements,
                                      [&](int64_t begin, int64_t end) { check(x, y, begin, end); });
  }
  OPENREG_VECTOR_CLONES static void check(const Bits* x, bool* y, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = (x[i] & kExponent) != kExponent;
  }
};

template <class Bits, Bits kExponent>
void launch_isfinite(const at::Tensor& self, const at::Tensor& out) {
  c10::openreg::launch_new_kernel<IsFiniteKernel<Bits, kExponent>>(
      self.const_data_ptr(), out.mutable_data_ptr<bool>(), self.numel());
}

// The kernel for a dtype's bit layout; nullptr for dtypes it does not know.
using IsFiniteLaunch = void (*)(const at::Tensor&, const at::Tensor&);
static IsFiniteLaunch isfinite_for(c10::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat: return launch_isfinite<uint32_t, 0x7f800000u>;
    case at::kDouble: return launch_isfinite<uint64_t, 0x7ff0000000000000ull>;
    case at::kHalf: return launch_isfinite<uint16_t, 0x7c00>;
    case at::kBFloat16: return launch_isfinite<uint16_t, 0x7f80>;
    default: return nullptr;
  }
}

at::Tensor isfinite(const at::Tensor& self) {
  IsFiniteLaunch launch = isfinite_for(self.scalar_type());
  if (launch == nullptr || !plain(self, self.scalar_type(), self.sizes())) {
    return call_borrowed<at::_ops::isfinite>({self}).back().toTensor();
  }
  c10::DeviceGuard guard(self.device());
  c10::openreg::check_storage_fits(self);
  at::Tensor out = empty_openreg(self.sizes(), at::kBool, self.device());
  if (out.numel() > 0) launch(self, out);
  return out;
}

}  // namespace at::native::openreg

// Activation.cpp: relu and relu_ on the device, hand-written: the hottest activation of every CNN.
//
// relu has no .out overload, so the borrowed path would run PyTorch's
// functional CPU kernel into fresh host memory and copy the result over: two
// passes over the data plus the page faults of a new host buffer. Here the
// result is written once, in place on the device.
#include "Activation.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/ops/clamp_min.h>
#include <c10/core/DeviceGuard.h>

#include "../../runtime/OpenRegLaunch.h"
#include "../../runtime/OpenRegStorage.h"
#include "Loops.h"
#include "Minimal.h"

namespace at::native::openreg {

using c10::openreg::KernelTensor;
using c10::openreg::launch_kernel;

// LITERALINCLUDE START: ACTIVATION_RELU_KERNELS
// Small contiguous operands: a plain loop over the kernel-view pointers
// (UnaryLoop, Loops.h). NaN stays NaN, as in PyTorch's relu, which is
// clamp_min(x, 0).
struct Relu {
  template <typename T>
  static T apply(T x) {
    return x < T(0) ? T(0) : x;
  }
};

// The plain loop runs on one thread: past kParallelElements elements,
// PyTorch's vectorized loop, on the kernel threads, wins.
using c10::openreg::kParallelElements;

at::Tensor relu(const at::Tensor& self) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  c10::openreg::check_storage_fits(self);  // a shrunk storage: PyTorch's usual error
  c10::DeviceGuard guard(self.device());
  at::Tensor out = empty_openreg_like(self, self.sizes(), self.scalar_type(), self.device());
  if (out.numel() == 0) return out;
  bool raw = self.is_contiguous() && self.numel() <= kParallelElements;
  if (raw && self.scalar_type() == at::kFloat) {
    launch_kernel(UnaryLoop<Relu, float>{out.mutable_data_ptr<float>(),
                                         self.const_data_ptr<float>(), self.numel()});
  } else if (raw && self.scalar_type() == at::kDouble) {
    launch_kernel(UnaryLoop<Relu, double>{out.mutable_data_ptr<double>(),
                                          self.const_data_ptr<double>(), self.numel()});
  } else {  // PyTorch's vectorized, parallel CPU loop, writing straight into the result
    launch_kernel([out = KernelTensor(out), in = KernelTensor(self)] {
      at::Tensor result = out.cpu();
      at::clamp_min_out(result, in.cpu(), 0);
    });
  }
  return out;
}

// relu_ (nn.ReLU(inplace=True), torchvision's models): the same kernels, in place.
// The overlap check is the CPU kernel's, made on the host so that the error is
// raised by the call rather than by a later synchronize.
at::Tensor& relu_(at::Tensor& self) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  c10::openreg::check_storage_fits(self);
  at::assert_no_internal_overlap(self);
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  bool raw = self.is_contiguous() && self.numel() <= kParallelElements;
  if (raw && self.scalar_type() == at::kFloat) {
    float* data = self.mutable_data_ptr<float>();
    launch_kernel(UnaryLoop<Relu, float>{data, data, self.numel()});
  } else if (raw && self.scalar_type() == at::kDouble) {
    double* data = self.mutable_data_ptr<double>();
    launch_kernel(UnaryLoop<Relu, double>{data, data, self.numel()});
  } else {
    launch_kernel([t = KernelTensor(self)] {
      at::Tensor values = t.cpu();
      at::clamp_min_(values, 0);
    });
  }
  return self;
}
// LITERALINCLUDE END: ACTIVATION_RELU_KERNELS

}  // namespace at::native::openreg

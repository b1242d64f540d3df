// Pointwise.cpp: the hottest borrowed pointwise operators, with a short host path.
//
// The borrowed path costs the host about half a microsecond more per call
// than a hand-written kernel: the dispatcher boxes the arguments, the plan's
// cache key is built and looked up, every argument is captured. At 1,024
// elements, where the CPU itself takes 1-2 us, that made neg, sigmoid,
// maximum and addcmul_ 1.3-2x the CPU. For the common case (contiguous
// operands of one floating dtype and one shape) these kernels allocate the
// result and queue PyTorch's own CPU kernel on it directly, so the values
// are the CPU's, bit for bit. Every other case (integers, broadcasting,
// mixed dtypes, strided views, and the errors PyTorch raises for them) goes to
// the borrowed kernel, which knows all of PyTorch's rules.
// LITERALINCLUDE START: POINTWISE_INCLUDES
#include <ATen/ops/abs_ops.h>
#include <ATen/ops/addcmul_ops.h>
#include <ATen/ops/maximum_ops.h>
#include <ATen/ops/minimum_ops.h>
#include <ATen/ops/neg_ops.h>
#include <ATen/ops/sigmoid_ops.h>
#include <ATen/ops/tanh_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "../../runtime/OpenRegLaunch.h"
#include "Borrowed.h"
#include "Minimal.h"
// LITERALINCLUDE END: POINTWISE_INCLUDES

namespace at::native::openreg {

namespace {
using c10::openreg::KernelTensor;

// LITERALINCLUDE START: POINTWISE_PLAIN
// The operands the short path takes: device tensors of a floating dtype,
// contiguous, of the given dtype and shape, without a negative view's bit.
bool plain(const at::Tensor& t, c10::ScalarType dtype, at::IntArrayRef sizes) {
  return t.is_privateuseone() && t.scalar_type() == dtype && c10::isFloatingType(dtype) &&
         t.sizes() == sizes && t.is_contiguous() && !t.is_neg();
}

// Inside a kernel, the CPU kernel is called directly: its tensors need no
// autograd, and skipping that layer saves the stream's worker a few hundred
// nanoseconds a call.
const c10::DispatchKeySet kCpu(c10::DispatchKey::CPU);
// LITERALINCLUDE END: POINTWISE_PLAIN

// LITERALINCLUDE START: POINTWISE_UNARY
// y = op(x). `Op` and `OpOut` are PyTorch's descriptors of the functional
// operator and its out= overload (at::_ops::neg, at::_ops::neg_out): inside
// the kernel, the out= overload writes the CPU kernel's results straight into
// the device tensor; the functional one names what the borrowed kernel runs.
template <class OpOut>
struct UnaryCall {
  KernelTensor out;
  KernelTensor self;
  void operator()() const {
    at::Tensor result = out.cpu();
    OpOut::redispatch(kCpu, self.cpu(), result);
  }
};

template <class Op, class OpOut>
at::Tensor unary(const at::Tensor& self) {
  if (!plain(self, self.scalar_type(), self.sizes())) {
    return call_borrowed<Op>({self}).back().toTensor();
  }
  c10::DeviceGuard guard(self.device());
  at::Tensor out = empty_openreg(self.sizes(), self.scalar_type(), self.device());
  if (out.numel() > 0) {
    c10::openreg::launch_new_kernel<UnaryCall<OpOut>>(KernelTensor(out), KernelTensor(self));
  }
  return out;
}
// LITERALINCLUDE END: POINTWISE_UNARY

// LITERALINCLUDE START: POINTWISE_BINARY
// z = op(x, y) for two operands of one dtype and one shape.
template <class OpOut>
struct BinaryCall {
  KernelTensor out;
  KernelTensor self;
  KernelTensor other;
  void operator()() const {
    at::Tensor result = out.cpu();
    OpOut::redispatch(kCpu, self.cpu(), other.cpu(), result);
  }
};

template <class Op, class OpOut>
at::Tensor binary(const at::Tensor& self, const at::Tensor& other) {
  if (!plain(self, self.scalar_type(), self.sizes()) ||
      !plain(other, self.scalar_type(), self.sizes()) || self.device() != other.device()) {
    return call_borrowed<Op>({self, other}).back().toTensor();
  }
  c10::DeviceGuard guard(self.device());
  at::Tensor out = empty_openreg(self.sizes(), self.scalar_type(), self.device());
  if (out.numel() > 0) {
    c10::openreg::launch_new_kernel<BinaryCall<OpOut>>(KernelTensor(out), KernelTensor(self),
                                                       KernelTensor(other));
  }
  return out;
}
// LITERALINCLUDE END: POINTWISE_BINARY

// LITERALINCLUDE START: POINTWISE_ADDCMUL
// self += value * tensor1 * tensor2 (optimizers' moment updates, LSTM cells).
struct AddcmulCall {
  KernelTensor self;
  KernelTensor tensor1;
  KernelTensor tensor2;
  c10::Scalar value;
  void operator()() const {
    at::Tensor result = self.cpu();
    at::_ops::addcmul_::redispatch(kCpu, result, tensor1.cpu(), tensor2.cpu(), value);
  }
};

at::Tensor& addcmul_(at::Tensor& self, const at::Tensor& tensor1, const at::Tensor& tensor2,
                     const c10::Scalar& value) {
  c10::ScalarType dtype = self.scalar_type();
  if (!plain(self, dtype, self.sizes()) || !plain(tensor1, dtype, self.sizes()) ||
      !plain(tensor2, dtype, self.sizes()) || tensor1.device() != self.device() ||
      tensor2.device() != self.device()) {
    call_borrowed<at::_ops::addcmul_>({self, tensor1, tensor2, value});
    return self;
  }
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  c10::openreg::launch_new_kernel<AddcmulCall>(KernelTensor(self), KernelTensor(tensor1),
                                               KernelTensor(tensor2), value);
  return self;
}
// LITERALINCLUDE END: POINTWISE_ADDCMUL
}  // namespace

// LITERALINCLUDE START: POINTWISE_REGISTER
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  namespace ops = at::_ops;
  m.impl("neg", TORCH_FN((unary<ops::neg, ops::neg_out>)));
  m.impl("abs", TORCH_FN((unary<ops::abs, ops::abs_out>)));
  m.impl("sigmoid", TORCH_FN((unary<ops::sigmoid, ops::sigmoid_out>)));
  m.impl("tanh", TORCH_FN((unary<ops::tanh, ops::tanh_out>)));
  m.impl("maximum", TORCH_FN((binary<ops::maximum, ops::maximum_out>)));
  m.impl("minimum", TORCH_FN((binary<ops::minimum, ops::minimum_out>)));
  m.impl("addcmul_", TORCH_FN(addcmul_));
}
// LITERALINCLUDE END: POINTWISE_REGISTER

}  // namespace at::native::openreg

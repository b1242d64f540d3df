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
// mixed dtypes, strided views, complex scalars, and the errors PyTorch raises
// for them) goes to the borrowed kernel, which knows all of PyTorch's rules.
// LITERALINCLUDE START: POINTWISE_INCLUDES
#include <ATen/MemoryOverlap.h>
#include <ATen/Parallel.h>
#include <ATen/ops/abs_ops.h>
#include <ATen/ops/addcdiv_ops.h>
#include <ATen/ops/addcmul_ops.h>
#include <ATen/ops/clamp_ops.h>
#include <ATen/ops/cos_ops.h>
#include <ATen/ops/eq_ops.h>
#include <ATen/ops/exp_ops.h>
#include <ATen/ops/_foreach_add_ops.h>
#include <ATen/ops/_foreach_addcdiv_ops.h>
#include <ATen/ops/_foreach_addcmul_ops.h>
#include <ATen/ops/_foreach_div_ops.h>
#include <ATen/ops/_foreach_lerp_ops.h>
#include <ATen/ops/_foreach_mul_ops.h>
#include <ATen/ops/_foreach_sqrt_ops.h>
#include <ATen/ops/ge_ops.h>
#include <ATen/ops/gt_ops.h>
#include <ATen/ops/isfinite_ops.h>
#include <ATen/ops/le_ops.h>
#include <ATen/ops/leaky_relu_ops.h>
#include <ATen/ops/lerp_ops.h>
#include <ATen/ops/log_ops.h>
#include <ATen/ops/lt_ops.h>
#include <ATen/ops/maximum_ops.h>
#include <ATen/ops/minimum_ops.h>
#include <ATen/ops/ne_ops.h>
#include <ATen/ops/neg_ops.h>
#include <ATen/ops/pow_ops.h>
#include <ATen/ops/rsqrt_ops.h>
#include <ATen/ops/sigmoid_ops.h>
#include <ATen/ops/sin_ops.h>
#include <ATen/ops/sqrt_ops.h>
#include <ATen/ops/tanh_ops.h>
#include <ATen/ops/threshold_backward_ops.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <torch/library.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

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

// LITERALINCLUDE START: POINTWISE_ARGUMENTS
// The arguments after `self`, one type at a time. `fits`: whether the short
// path takes it (a tensor like `self`; a scalar that is not complex, since a
// complex scalar makes a complex result). `Kept`: what the kernel's body
// keeps of it (a tensor as a KernelTensor, anything else by value).
// `in_kernel`: what the CPU kernel is given inside the kernel.
bool fits(const at::Tensor& t, const at::Tensor& self) {
  return plain(t, self.scalar_type(), self.sizes()) && t.device() == self.device();
}
template <class Self>
bool fits(const c10::Scalar& s, const Self&) {
  return !s.isComplex();
}
template <class Self>
bool fits(const std::optional<c10::Scalar>& s, const Self&) {
  return !s.has_value() || !s->isComplex();
}

template <class T>
struct Kept {
  using type = std::decay_t<T>;
};
template <>
struct Kept<const at::Tensor&> {
  using type = KernelTensor;
};

template <class T>
const T& in_kernel(const T& value) {
  return value;
}
at::Tensor in_kernel(const KernelTensor& t) { return t.cpu(); }

// In place, PyTorch refuses an input that overlaps the result in part
// (x[1:].lerp_(x[:-1], w)). The CPU kernel would refuse it too, inside the
// kernel; checked on the host, the call itself raises it, as on the CPU.
void check_overlap(const at::Tensor& self, const at::Tensor& t) {
  at::assert_no_partial_overlap(self, t);
}
template <class T>
void check_overlap(const at::Tensor&, const T&) {}
// LITERALINCLUDE END: POINTWISE_ARGUMENTS

// LITERALINCLUDE START: POINTWISE_LIST_ARGUMENTS
// The same three for a list of tensors (the foreach operators below): the
// short path takes a list whose every tensor is plain, on one device; a
// second list must match the first entry by entry (and so is on its device).
bool plain_list(at::TensorList self) {
  if (self.empty()) return false;
  for (const at::Tensor& t : self) {
    if (!plain(t, t.scalar_type(), t.sizes()) || t.device() != self[0].device()) return false;
  }
  return true;
}
bool fits(at::TensorList list, at::TensorList self) {
  if (list.size() != self.size()) return false;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!fits(list[i], self[i])) return false;
  }
  return true;
}

struct KernelTensors {
  std::vector<KernelTensor> tensors;
  KernelTensors(at::TensorList list) : tensors(list.begin(), list.end()) {}
};
template <>
struct Kept<at::TensorList> {
  using type = KernelTensors;
};
std::vector<at::Tensor> in_kernel(const KernelTensors& list) {
  std::vector<at::Tensor> cpu;
  cpu.reserve(list.tensors.size());
  for (const KernelTensor& t : list.tensors) cpu.push_back(t.cpu());
  return cpu;
}

void check_overlap(at::TensorList self, at::TensorList list) {
  for (size_t i = 0; i < self.size(); ++i) at::assert_no_partial_overlap(self[i], list[i]);
}
template <class T>
void check_overlap(at::TensorList, const T&) {}
// LITERALINCLUDE END: POINTWISE_LIST_ARGUMENTS

// LITERALINCLUDE START: POINTWISE_FUNCTIONAL
// out = op(self, rest...). `Op` and `OpOut` are PyTorch's descriptors of the
// functional operator and its out= overload (at::_ops::sqrt,
// at::_ops::sqrt_out): the functional one's `schema` gives the argument types
// and names what the borrowed kernel runs; inside the kernel, the out=
// overload writes the CPU kernel's results straight into the device tensor.
// The result has the operands' dtype, or bool (`to_bool`: comparisons).
template <class Op, class OpOut, bool to_bool, class Schema = typename Op::schema>
struct Functional;

template <class Op, class OpOut, bool to_bool, class... Rest>
struct Functional<Op, OpOut, to_bool, at::Tensor(const at::Tensor&, Rest...)> {
  using KeptRest = std::tuple<typename Kept<Rest>::type...>;
  struct Call {
    KernelTensor out;
    KernelTensor self;
    KeptRest rest;
    void operator()() const {
      at::Tensor result = out.cpu();
      std::apply(
          [&](const auto&... r) { OpOut::redispatch(kCpu, self.cpu(), in_kernel(r)..., result); },
          rest);
    }
  };

  static at::Tensor call(const at::Tensor& self, Rest... rest) {
    if (!plain(self, self.scalar_type(), self.sizes()) || !(fits(rest, self) && ...)) {
      return call_borrowed<Op>({self, rest...}).back().toTensor();
    }
    c10::DeviceGuard guard(self.device());
    at::Tensor out =
        empty_openreg(self.sizes(), to_bool ? at::kBool : self.scalar_type(), self.device());
    if (out.numel() > 0) {
      c10::openreg::launch_new_kernel<Call>(KernelTensor(out), KernelTensor(self),
                                            KeptRest(rest...));
    }
    return out;
  }
};
// LITERALINCLUDE END: POINTWISE_FUNCTIONAL

// LITERALINCLUDE START: POINTWISE_INPLACE
// self = op_(self, rest...): optimizers' updates (addcmul_, addcdiv_, lerp_).
template <class Op, class Schema = typename Op::schema>
struct InPlace;

template <class Op, class... Rest>
struct InPlace<Op, at::Tensor&(at::Tensor&, Rest...)> {
  using KeptRest = std::tuple<typename Kept<Rest>::type...>;
  struct Call {
    KernelTensor self;
    KeptRest rest;
    void operator()() const {
      at::Tensor result = self.cpu();
      std::apply([&](const auto&... r) { Op::redispatch(kCpu, result, in_kernel(r)...); }, rest);
    }
  };

  static at::Tensor& call(at::Tensor& self, Rest... rest) {
    if (!plain(self, self.scalar_type(), self.sizes()) || !(fits(rest, self) && ...)) {
      call_borrowed<Op>({self, rest...});
      return self;
    }
    if (self.numel() == 0) return self;
    (check_overlap(self, rest), ...);
    c10::DeviceGuard guard(self.device());
    c10::openreg::launch_new_kernel<Call>(KernelTensor(self), KeptRest(rest...));
    return self;
  }
};
// LITERALINCLUDE END: POINTWISE_INPLACE

// LITERALINCLUDE START: POINTWISE_FOREACH
// Foreach operators update every tensor of a list in place: torch.optim's
// foreach implementations call a handful of them per step, for all the
// parameters at once. Borrowed, each call also captured every list on the
// host (1.3x the CPU's call for four tensors of 256 floats). Here the
// host checks the lists and queues one kernel: PyTorch's CPU foreach kernel
// on all of them.
template <class Op, class Schema = typename Op::schema>
struct ForEach;

template <class Op, class... Rest>
struct ForEach<Op, void(at::TensorList, Rest...)> {
  using KeptRest = std::tuple<typename Kept<Rest>::type...>;
  struct Call {
    KernelTensors self;
    KeptRest rest;
    void operator()() const {
      std::vector<at::Tensor> result = in_kernel(self);
      std::apply([&](const auto&... r) { Op::redispatch(kCpu, result, in_kernel(r)...); }, rest);
    }
  };

  static void call(at::TensorList self, Rest... rest) {
    if (!plain_list(self) || !(fits(rest, self) && ...)) {
      call_borrowed<Op>({self, rest...});
      return;
    }
    (check_overlap(self, rest), ...);
    c10::DeviceGuard guard(self[0].device());
    c10::openreg::launch_new_kernel<Call>(KernelTensors(self), KeptRest(rest...));
  }
};
// LITERALINCLUDE END: POINTWISE_FOREACH

// LITERALINCLUDE START: POINTWISE_ISFINITE
// isfinite: PyTorch composes it of four operators (x == x, abs, != inf, and),
// each a pass over memory with a temporary; at 1 M floats that made the
// borrowed composite 1.15x the CPU. A value is finite when its exponent bits
// are not all ones, so one branch-free pass over the raw bits, which the
// compiler vectorizes, answers it.
template <class Bits, Bits kExponent>
struct IsFiniteKernel {
  const void* in;
  bool* out;
  int64_t n;
  void operator()() const {
    const auto* x = c10::openreg::kernel_pointer(static_cast<const Bits*>(in));
    bool* y = c10::openreg::kernel_pointer(out);
    c10::openreg::kernel_parallel_for(0, n, 32768, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = (x[i] & kExponent) != kExponent;
    });
  }
};

template <class Bits, Bits kExponent>
void launch_isfinite(const at::Tensor& self, const at::Tensor& out) {
  c10::openreg::launch_new_kernel<IsFiniteKernel<Bits, kExponent>>(
      self.const_data_ptr(), out.mutable_data_ptr<bool>(), self.numel());
}

// The kernel for a dtype's bit layout; nullptr for dtypes it does not know.
using IsFiniteLaunch = void (*)(const at::Tensor&, const at::Tensor&);
IsFiniteLaunch isfinite_for(c10::ScalarType dtype) {
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
// LITERALINCLUDE END: POINTWISE_ISFINITE
}  // namespace

// LITERALINCLUDE START: POINTWISE_REGISTER
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  namespace ops = at::_ops;
  // The result has the operands' dtype.
  m.impl("neg", TORCH_FN((Functional<ops::neg, ops::neg_out, false>::call)));
  m.impl("abs", TORCH_FN((Functional<ops::abs, ops::abs_out, false>::call)));
  m.impl("sigmoid", TORCH_FN((Functional<ops::sigmoid, ops::sigmoid_out, false>::call)));
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
  m.impl("threshold_backward",
         TORCH_FN((Functional<ops::threshold_backward, ops::threshold_backward_grad_input,
                              false>::call)));
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
// LITERALINCLUDE END: POINTWISE_REGISTER

}  // namespace at::native::openreg

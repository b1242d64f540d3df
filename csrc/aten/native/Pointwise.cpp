// Pointwise.cpp: the hottest borrowed pointwise operators, with a short host path.
//
// The borrowed path costs the host about half a microsecond more per call
// than a hand-written kernel: the dispatcher boxes the arguments, the plan's
// cache key is built and looked up, every argument is captured. At 1,024
// elements, where the CPU itself takes 1-2 us, that made neg, sigmoid,
// maximum and addcmul_ 1.3-2x the CPU. For the common case (contiguous
// operands of one floating dtype and one shape; for functional operators,
// slices of a contiguous tensor too) these kernels allocate the result and
// queue PyTorch's own CPU kernel on it directly, so the values are the
// CPU's, bit for bit; on small float operands the exact operators (neg, abs,
// comparisons) run a loop of their own, with the same bits. Every other case
// (integers, broadcasting, mixed dtypes, other strided views, complex
// scalars, and the errors PyTorch raises for them) goes to the borrowed
// kernel, which knows all of PyTorch's rules.
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
#include <ATen/ops/silu_ops.h>
#include <ATen/ops/sin_ops.h>
#include <ATen/ops/sqrt_ops.h>
#include <ATen/ops/tanh_ops.h>
#include <ATen/ops/threshold_backward_ops.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <torch/library.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "../../runtime/OpenRegLaunch.h"
#include "Borrowed.h"
#include "Loops.h"
#include "Minimal.h"
// LITERALINCLUDE END: POINTWISE_INCLUDES

namespace at::native::openreg {

namespace {
using c10::openreg::KernelTensor;

// LITERALINCLUDE START: POINTWISE_PLAIN
// A slice of a contiguous tensor (chunk, narrow, a step along a dimension):
// its dimensions of more than one element have strides that fall from first
// to last. PyTorch's CPU kernels keep the dimensions' order for the result,
// so a functional operator on such a view gives a contiguous result.
bool row_major_slice(const at::Tensor& t) {
  int64_t outer = 0;  // the stride of the last dimension seen, 0 before the first
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 1) continue;
    int64_t stride = t.stride(d);
    if (stride <= 0 || (outer != 0 && stride >= outer)) return false;
    outer = stride;
  }
  return true;
}

// The operands the short path takes: device tensors of a floating dtype,
// contiguous (or, if `slices`, a row-major slice), of the given dtype and
// shape, without a negative view's bit.
bool plain(const at::Tensor& t, c10::ScalarType dtype, at::IntArrayRef sizes,
           bool slices = false) {
  return t.is_privateuseone() && t.scalar_type() == dtype && c10::isFloatingType(dtype) &&
         t.sizes() == sizes && (t.is_contiguous() || (slices && row_major_slice(t))) &&
         !t.is_neg();
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
bool fits(const at::Tensor& t, const at::Tensor& self, bool slices = false) {
  return plain(t, self.scalar_type(), self.sizes(), slices) && t.device() == self.device();
}
template <class Self>
bool fits(const c10::Scalar& s, const Self&, bool = false) {
  return !s.isComplex();
}
template <class Self>
bool fits(const std::optional<c10::Scalar>& s, const Self&, bool = false) {
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

// LITERALINCLUDE START: POINTWISE_EXACT_LOOPS
// Small float operands of the operators whose result is exact (a sign, a
// comparison): one loop over the kernel-view pointers. Each gives the bits
// PyTorch's CPU kernel gives, NaN's too, so nothing is lost by not calling
// it. (maximum and minimum are not here: PyTorch's vectorized body and its
// scalar tail give different NaN bits and signs of zero, which one loop
// cannot both reproduce.) Through the CPU kernel, the worker spent about
// 2 us on eq of 1,024 floats (wrapping three tensors, building a
// TensorIterator, a scalar loop) where the host had spent 1.2 us: the
// worker, not the host, set the pace, at 1.3-1.5x the CPU's call. Larger
// operands keep PyTorch's parallel, vectorized kernels.
template <class Op>
struct Exact {
  static constexpr bool kHas = false;
};
template <>
struct Exact<at::_ops::neg> {
  static constexpr bool kHas = true;
  template <class T>
  static T apply(T x) { return -x; }
};
template <>
struct Exact<at::_ops::abs> {
  static constexpr bool kHas = true;
  template <class T>
  static T apply(T x) { return std::abs(x); }
};
// A comparison with a scalar compares in the tensor's dtype (x > 0.1 on float
// tensors converts 0.1 to float first), so one apply serves both overloads.
#define OPENREG_EXACT_COMPARISON(name, expr)             \
  template <>                                            \
  struct Exact<at::_ops::name##_Tensor> {                \
    static constexpr bool kHas = true;                   \
    template <class T>                                   \
    static bool apply(T a, T b) { return expr; }         \
  };                                                     \
  template <>                                            \
  struct Exact<at::_ops::name##_Scalar> : Exact<at::_ops::name##_Tensor> {};
OPENREG_EXACT_COMPARISON(eq, a == b)
OPENREG_EXACT_COMPARISON(ne, a != b)
OPENREG_EXACT_COMPARISON(lt, a < b)
OPENREG_EXACT_COMPARISON(le, a <= b)
OPENREG_EXACT_COMPARISON(gt, a > b)
OPENREG_EXACT_COMPARISON(ge, a >= b)
#undef OPENREG_EXACT_COMPARISON

// The scalar in T as PyTorch's CPU kernels convert it, a plain cast (1e300
// becomes inf in a float; Scalar::to<float> would refuse it), or nullopt for
// a kind the loop leaves to the CPU kernel (unsigned 64-bit, symbolic).
template <class T>
std::optional<T> scalar_in(const c10::Scalar& s) {
  if (s.isSymbolic()) return std::nullopt;
  switch (s.type()) {
    case at::kDouble: return static_cast<T>(s.toDouble());
    case at::kLong: return static_cast<T>(s.toLong());
    case at::kBool: return static_cast<T>(s.toBool());
    default: return std::nullopt;
  }
}

// Queues the loop for out = Op(self, rest...) on T, or returns false if the
// loop does not take these arguments. The operands are plain (checked by the
// caller) and of T; every tensor must still fit its storage.
template <class Op, class T, class R>
bool launch_exact(const at::Tensor& out, const at::Tensor& self) {
  c10::openreg::check_storage_fits(self);
  c10::openreg::launch_new_kernel<UnaryLoop<Exact<Op>, T, R>>(
      out.mutable_data_ptr<R>(), self.const_data_ptr<T>(), self.numel());
  return true;
}
template <class Op, class T, class R>
bool launch_exact(const at::Tensor& out, const at::Tensor& self, const at::Tensor& other) {
  if (!other.is_contiguous()) return false;
  c10::openreg::check_storage_fits(self);
  c10::openreg::check_storage_fits(other);
  c10::openreg::launch_new_kernel<BinaryLoop<Exact<Op>, T, R>>(
      out.mutable_data_ptr<R>(), self.const_data_ptr<T>(), other.const_data_ptr<T>(),
      self.numel());
  return true;
}
template <class Op, class T, class R>
bool launch_exact(const at::Tensor& out, const at::Tensor& self, const c10::Scalar& other) {
  std::optional<T> value = scalar_in<T>(other);
  if (!value) return false;
  c10::openreg::check_storage_fits(self);
  c10::openreg::launch_new_kernel<ScalarLoop<Exact<Op>, T, R>>(
      out.mutable_data_ptr<R>(), self.const_data_ptr<T>(), *value, self.numel());
  return true;
}

// Whether the loop takes a call of an operator with an Exact: contiguous
// float or double operands, fewer elements than a kernel needs to go parallel.
bool takes_exact(const at::Tensor& self) {
  return (self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble) &&
         self.numel() < c10::openreg::kParallelElements && self.is_contiguous();
}
// LITERALINCLUDE END: POINTWISE_EXACT_LOOPS

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
    // Slices too: the gates of an LSTM cell are chunks of one matrix.
    if (!plain(self, self.scalar_type(), self.sizes(), true) || !(fits(rest, self, true) && ...)) {
      return call_borrowed<Op>({self, rest...}).back().toTensor();
    }
    c10::DeviceGuard guard(self.device());
    at::Tensor out =
        empty_openreg(self.sizes(), to_bool ? at::kBool : self.scalar_type(), self.device());
    if (out.numel() == 0) return out;
    if constexpr (Exact<Op>::kHas) {  // small float operands: a loop of our own
      using FloatResult = std::conditional_t<to_bool, bool, float>;
      using DoubleResult = std::conditional_t<to_bool, bool, double>;
      bool queued = takes_exact(self) &&
                    (self.scalar_type() == at::kFloat
                         ? launch_exact<Op, float, FloatResult>(out, self, rest...)
                         : launch_exact<Op, double, DoubleResult>(out, self, rest...));
      if (queued) return out;
    }
    c10::openreg::launch_new_kernel<Call>(KernelTensor(out), KernelTensor(self),
                                          KeptRest(rest...));
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
// compiler vectorizes (at the machine's width: OPENREG_VECTOR_CLONES), answers it.
template <class Bits, Bits kExponent>
struct IsFiniteKernel {
  const void* in;
  bool* out;
  int64_t n;
  void operator()() const {
    const auto* x = c10::openreg::kernel_pointer(static_cast<const Bits*>(in));
    bool* y = c10::openreg::kernel_pointer(out);
    c10::openreg::kernel_parallel_for(0, n, 32768, [&](int64_t begin, int64_t end) {
      check(x, y, begin, end);
    });
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

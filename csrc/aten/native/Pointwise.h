// Pointwise.h: the short host path of the hottest pointwise operators, as templates per operator.
//
// The borrowed path costs the host more per call than a hand-written kernel:
// the dispatcher boxes the arguments, the plan's cache key is built and
// looked up, every argument is captured. On small tensors, where the CPU
// itself takes little time, that overhead would set the pace. For the common
// case (contiguous operands of one floating dtype and one shape; for
// functional operators, slices of a contiguous tensor too) these kernels
// allocate the result and queue PyTorch's own CPU kernel on it directly, so
// the values are the CPU's, bit for bit; on small float operands the exact
// operators (neg, abs, comparisons) run a loop of their own, with the same
// bits. Every other case (integers, broadcasting, mixed dtypes, other strided
// views, complex scalars, and the errors PyTorch raises for them) goes to the
// borrowed kernel, which knows all of PyTorch's rules.
//
// OpenRegPointwise.cpp instantiates the templates once per operator it
// registers (Functional<at::_ops::neg, at::_ops::neg_out, false>::call): they
// live in this header so that each instantiation is compiled, and inlined,
// where it is registered.
#pragma once

#include <ATen/MemoryOverlap.h>
#include <ATen/ops/abs_ops.h>
#include <ATen/ops/eq_ops.h>
#include <ATen/ops/ge_ops.h>
#include <ATen/ops/gt_ops.h>
#include <ATen/ops/le_ops.h>
#include <ATen/ops/lt_ops.h>
#include <ATen/ops/ne_ops.h>
#include <ATen/ops/neg_ops.h>
#include <c10/core/DeviceGuard.h>

#include <cmath>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "../../runtime/OpenRegLaunch.h"
#include "Borrowed.h"
#include "Loops.h"
#include "Minimal.h"

namespace at::native::openreg {

using c10::openreg::KernelTensor;

// A slice of a contiguous tensor (chunk, narrow, a step along a dimension):
// its dimensions of more than one element have strides that fall from first
// to last. PyTorch's CPU kernels keep the dimensions' order for the result,
// so a functional operator on such a view gives a contiguous result.
inline bool row_major_slice(const at::Tensor& t) {
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
inline bool plain(const at::Tensor& t, c10::ScalarType dtype, at::IntArrayRef sizes,
                  bool slices = false) {
  return t.is_privateuseone() && t.scalar_type() == dtype && c10::isFloatingType(dtype) &&
         t.sizes() == sizes && (t.is_contiguous() || (slices && row_major_slice(t))) && !t.is_neg();
}

// Inside a kernel, the CPU kernel is called directly: its tensors need no
// autograd, and skipping that layer saves the stream's worker a trip through
// the dispatcher on every call.
const c10::DispatchKeySet kCpu(c10::DispatchKey::CPU);

// The arguments after `self`, one type at a time. `fits`: whether the short
// path takes it (a tensor like `self`; a scalar that is not complex, since a
// complex scalar makes a complex result). `Kept`: what the kernel's body
// keeps of it (a tensor as a KernelTensor, anything else by value).
// `in_kernel`: what the CPU kernel is given inside the kernel.
inline bool fits(const at::Tensor& t, const at::Tensor& self, bool slices = false) {
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
inline at::Tensor in_kernel(const KernelTensor& t) { return t.cpu(); }

// In place, PyTorch refuses an input that overlaps the result in part
// (x[1:].lerp_(x[:-1], w)). The CPU kernel would refuse it too, inside the
// kernel; checked on the host, the call itself raises it, as on the CPU.
inline void check_overlap(const at::Tensor& self, const at::Tensor& t) {
  at::assert_no_partial_overlap(self, t);
}
template <class T>
void check_overlap(const at::Tensor&, const T&) {}

// The same three for a list of tensors (the foreach operators below): the
// short path takes a list whose every tensor is plain, on one device; a
// second list must match the first entry by entry (and so is on its device).
inline bool plain_list(at::TensorList self) {
  if (self.empty()) return false;
  for (const at::Tensor& t : self) {
    if (!plain(t, t.scalar_type(), t.sizes()) || t.device() != self[0].device()) return false;
  }
  return true;
}
inline bool fits(at::TensorList list, at::TensorList self) {
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
inline std::vector<at::Tensor> in_kernel(const KernelTensors& list) {
  std::vector<at::Tensor> cpu;
  cpu.reserve(list.tensors.size());
  for (const KernelTensor& t : list.tensors) cpu.push_back(t.cpu());
  return cpu;
}

inline void check_overlap(at::TensorList self, at::TensorList list) {
  for (size_t i = 0; i < self.size(); ++i) at::assert_no_partial_overlap(self[i], list[i]);
}
template <class T>
void check_overlap(at::TensorList, const T&) {}

// LITERALINCLUDE START: POINTWISE_EXACT_LOOPS
// Small float operands of the operators whose result is exact (a sign, a
// comparison): one loop over the kernel-view pointers. Each gives the bits
// PyTorch's CPU kernel gives, NaN's too, so nothing is lost by not calling
// it. (maximum and minimum are not here: PyTorch's vectorized body and its
// scalar tail give different NaN bits and signs of zero, which one loop
// cannot both reproduce.) Through the CPU kernel, the worker spends longer
// on a small comparison (wrapping three tensors, building a TensorIterator,
// a scalar loop) than the host spends queueing it: the worker, not the host,
// would set the pace. Larger operands keep PyTorch's parallel, vectorized
// kernels.
template <class Op>
struct Exact {
  static constexpr bool kHas = false;
};
template <>
struct Exact<at::_ops::neg> {
  static constexpr bool kHas = true;
  template <class T>
  static T apply(T x) {
    return -x;
  }
};
template <>
struct Exact<at::_ops::abs> {
  static constexpr bool kHas = true;
  template <class T>
  static T apply(T x) {
    return std::abs(x);
  }
};
// A comparison with a scalar compares in the tensor's dtype (x > 0.1 on float
// tensors converts 0.1 to float first), so one apply serves both overloads.
#define OPENREG_EXACT_COMPARISON(name, expr) \
  template <>                                \
  struct Exact<at::_ops::name##_Tensor> {    \
    static constexpr bool kHas = true;       \
    template <class T>                       \
    static bool apply(T a, T b) {            \
      return expr;                           \
    }                                        \
  };                                         \
  template <>                                \
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
      out.mutable_data_ptr<R>(), self.const_data_ptr<T>(), other.const_data_ptr<T>(), self.numel());
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
inline bool takes_exact(const at::Tensor& self) {
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
    // A slice's result is laid out as PyTorch lays it out (result_strides).
    at::Tensor out = empty_openreg_like(self, self.sizes(),
                                        to_bool ? at::kBool : self.scalar_type(), self.device());
    if (out.numel() == 0) return out;
    if constexpr (Exact<Op>::kHas) {  // small float operands: a loop of our own
      using FloatResult = std::conditional_t<to_bool, bool, float>;
      using DoubleResult = std::conditional_t<to_bool, bool, double>;
      bool queued =
          takes_exact(self) && (self.scalar_type() == at::kFloat
                                    ? launch_exact<Op, float, FloatResult>(out, self, rest...)
                                    : launch_exact<Op, double, DoubleResult>(out, self, rest...));
      if (queued) return out;
    }
    c10::openreg::launch_new_kernel<Call>(KernelTensor(out), KernelTensor(self), KeptRest(rest...));
    return out;
  }
};
// LITERALINCLUDE END: POINTWISE_FUNCTIONAL

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

// LITERALINCLUDE START: POINTWISE_FOREACH
// Foreach operators update every tensor of a list in place: torch.optim's
// foreach implementations call a handful of them per step, for all the
// parameters at once. Borrowed, each call would also capture every list on
// the host, a plan and a copy of each tensor's metadata. Here the host checks
// the lists and queues one kernel: PyTorch's CPU foreach kernel on all of
// them.
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

// isfinite in one pass over the raw bits (Pointwise.cpp).
at::Tensor isfinite(const at::Tensor& self);

}  // namespace at::native::openreg

// Reduce.cpp: sum, mean, vector_norm, argmax, argmin, amax, amin and cumsum, with a short
// host path for contiguous float tensors; mse_loss's mean and sum in one pass; all and any of a
// boolean tensor.
//
// A small reduction is a short job on the CPU; through the borrowed path the
// host would also plan the call and capture its arguments, which costs more
// than the reduction itself. For contiguous float tensors reduced over every
// dimension or the last one, the host allocates the result and queues
// PyTorch's own CPU reduction on it: the CPU's bits (a hand-written loop that
// summed in double was more exact than the CPU's float cascade, and failed
// OpInfo's exact comparisons of integer inputs' float results). Everything
// else keeps PyTorch's reduction, borrowed.
#include "Reduce.h"

#include <ATen/Dispatch.h>
#include <ATen/core/Reduction.h>
#include <ATen/ops/all_ops.h>
#include <ATen/ops/amax_ops.h>
#include <ATen/ops/amin_ops.h>
#include <ATen/ops/any_ops.h>
#include <ATen/ops/argmax_ops.h>
#include <ATen/ops/argmin_ops.h>
#include <ATen/ops/cumsum_ops.h>
#include <ATen/ops/linalg_vector_norm_ops.h>
#include <ATen/ops/mean_ops.h>
#include <ATen/ops/mse_loss_ops.h>
#include <ATen/ops/sum_ops.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/WrapDimMinimal.h>

#include <algorithm>
#include <optional>
#include <tuple>

#include "../../runtime/OpenRegLaunch.h"
#include "../../runtime/OpenRegStorage.h"
#include "Borrowed.h"
#include "Minimal.h"

namespace at::native::openreg {

using c10::openreg::KernelTensor;

// LITERALINCLUDE START: REDUCE_RAW_SUM

// Whether the short path takes this input at all: a non-empty contiguous float
// or double tensor that still fits its storage (a shrunk one: PyTorch's error).
// Any size: even on large tensors the borrowed path's boxed call adds its
// planning and captures to a sum or a mean.
// PyTorch's reductions over chosen dimensions take tensors of at most 64
// dimensions, a check its CPU kernel makes inside: a tensor with more goes
// the borrowed way, whose first call runs that check before returning, so
// the error is raised at the call, as on the CPU.
constexpr int64_t kMaxReductionDims = 64;

static bool plain_float(const at::Tensor& self) {
  c10::openreg::check_storage_fits(self);
  c10::ScalarType t = self.scalar_type();
  return self.is_contiguous() && self.numel() > 0 && (t == at::kFloat || t == at::kDouble);
}

// The result's shape when the short path takes the reduction: over the last
// dimension, or over all of them, of a plain_float tensor, in its own dtype.
// Otherwise (other dimensions, an out-of-range one, other dtypes, strided
// inputs) nullopt: borrowed.
static std::optional<at::DimVector> short_path_shape(const at::Tensor& self,
                                                     at::OptionalIntArrayRef dim, bool keepdim,
                                                     std::optional<c10::ScalarType> dtype) {
  const int64_t ndim = self.dim();
  if (!plain_float(self) || (dtype.has_value() && *dtype != self.scalar_type())) {
    return std::nullopt;
  }
  bool all = !dim.has_value() || dim->empty() ||
             (ndim == 0 && dim->size() == 1 && ((*dim)[0] == 0 || (*dim)[0] == -1));
  bool last = !all && ndim > 0 && dim->size() == 1 && ((*dim)[0] == ndim - 1 || (*dim)[0] == -1);
  if ((!all && !last) || ndim > kMaxReductionDims) return std::nullopt;
  at::DimVector shape;
  if (all) {
    if (keepdim) shape.assign(ndim, 1);  // else a 0-dim result
  } else {
    shape.assign(self.sizes().begin(), self.sizes().end() - 1);
    if (keepdim) shape.push_back(1);
  }
  return shape;
}

// PyTorch's CPU reduction, called below autograd, writing into the result.
// `OpOut` is its out= overload's descriptor (at::_ops::sum_IntList_out,
// at::_ops::mean_out); `Extra` are the arguments it takes between the input
// and the dimensions (vector_norm's order), none for sum and mean.
template <class OpOut, class... Extra>
struct ReduceCall {
  KernelTensor out;
  KernelTensor self;
  std::optional<c10::SmallVector<int64_t, 2>> dim;
  bool keepdim;
  std::tuple<Extra...> extra;

  void operator()() const {
    at::Tensor result = out.cpu();
    at::OptionalIntArrayRef dims = dim.has_value() ? at::OptionalIntArrayRef(*dim) : std::nullopt;
    std::apply(
        [&](const Extra&... e) {
          OpOut::redispatch(c10::DispatchKeySet(c10::DispatchKey::CPU), self.cpu(), e..., dims,
                            keepdim, std::nullopt, result);
        },
        extra);
  }
};

// A complex scalar among the extra arguments is PyTorch's error to raise.
static bool real(const c10::Scalar& s) { return !s.isComplex(); }

// The short path when it applies, else PyTorch's reduction through the
// borrowed kernel (which also raises PyTorch's errors: integer means,
// dimensions out of range). `Op` is the functional operator.
template <class Op, class OpOut, class... Extra>
at::Tensor reduce(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<c10::ScalarType> dtype, const Extra&... extra) {
  std::optional<at::DimVector> shape = short_path_shape(self, dim, keepdim, dtype);
  if (!shape.has_value() || !(real(extra) && ...)) {
    c10::IValue dim_arg = dim.has_value() ? c10::IValue(dim->vec()) : c10::IValue();
    return call_borrowed<Op>({self, extra..., dim_arg, keepdim, dtype}).back().toTensor();
  }
  c10::DeviceGuard guard(self.device());
  at::Tensor out = empty_openreg(*shape, self.scalar_type(), self.device());
  std::optional<c10::SmallVector<int64_t, 2>> dims;
  if (dim.has_value()) dims.emplace(dim->begin(), dim->end());
  c10::openreg::launch_new_kernel<ReduceCall<OpOut, Extra...>>(
      KernelTensor(out), KernelTensor(self), std::move(dims), keepdim,
      std::tuple<Extra...>(extra...));
  return out;
}

at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<c10::ScalarType> dtype) {
  return reduce<at::_ops::sum_dim_IntList, at::_ops::sum_IntList_out>(self, dim, keepdim, dtype);
}

at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype) {
  return reduce<at::_ops::mean_dim, at::_ops::mean_out>(self, dim, keepdim, dtype);
}

// The full reductions: one row. An empty list of dimensions, as PyTorch's
// own sum() and mean() pass (its kernels refuse None past 64 dimensions).
at::Tensor sum(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  return sum_dim(self, at::IntArrayRef{}, false, dtype);
}

at::Tensor mean(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  return mean_dim(self, at::IntArrayRef{}, false, dtype);
}
// LITERALINCLUDE END: REDUCE_RAW_SUM

// torch.linalg.vector_norm (and Tensor.norm, clip_grad_norm_): the same short
// path, with the order `ord` handed to PyTorch's CPU kernel.
at::Tensor linalg_vector_norm(const at::Tensor& self, const c10::Scalar& ord,
                              at::OptionalIntArrayRef dim, bool keepdim,
                              std::optional<c10::ScalarType> dtype) {
  return reduce<at::_ops::linalg_vector_norm, at::_ops::linalg_vector_norm_out>(self, dim, keepdim,
                                                                                dtype, ord);
}

// LITERALINCLUDE START: REDUCE_ARG
// argmax and argmin (a classifier's predictions): the same idea, with an
// int64 result and one optional dimension, any of them. The kernel serves
// every reduction whose out= overload reads (self, dim, keepdim, out): `OpOut`
// is that overload's descriptor (at::_ops::argmax_out), `Dim` the type the
// kernel keeps its dimension in (a copy: the caller's list may be gone when
// the kernel runs).
template <class OpOut, class Dim>
struct DimReduceCall {
  KernelTensor out;
  KernelTensor self;
  Dim dim;
  bool keepdim;

  void operator()() const {
    at::Tensor result = out.cpu();
    OpOut::redispatch(c10::DispatchKeySet(c10::DispatchKey::CPU), self.cpu(), dim, keepdim, result);
  }
};

template <class Op, class OpOut>
at::Tensor arg_reduce(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  if (!plain_float(self) || self.dim() > kMaxReductionDims) {
    return call_borrowed<Op>({self, dim, keepdim}).back().toTensor();
  }
  const int64_t ndim = self.dim();
  at::DimVector shape;
  if (!dim.has_value()) {
    if (keepdim) shape.assign(ndim, 1);  // else a 0-dim result
  } else {
    // PyTorch's IndexError when out of range; a 0-dim tensor takes 0 and -1.
    int64_t d = c10::maybe_wrap_dim(*dim, ndim);
    shape.assign(self.sizes().begin(), self.sizes().end());
    if (ndim > 0 && keepdim) shape[d] = 1;
    if (ndim > 0 && !keepdim) shape.erase(shape.begin() + d);
  }
  c10::DeviceGuard guard(self.device());
  at::Tensor out = empty_openreg(shape, at::kLong, self.device());
  c10::openreg::launch_new_kernel<DimReduceCall<OpOut, std::optional<int64_t>>>(
      KernelTensor(out), KernelTensor(self), dim, keepdim);
  return out;
}

at::Tensor argmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce<at::_ops::argmax, at::_ops::argmax_out>(self, dim, keepdim);
}

at::Tensor argmin(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce<at::_ops::argmin, at::_ops::argmin_out>(self, dim, keepdim);
}
// LITERALINCLUDE END: REDUCE_ARG

// amax and amin (attention's softmax keeps a row maximum; clipping and
// quantization ranges): the short path of sum and mean, for a list of
// dimensions that is not optional (empty means every dimension). Borrowed,
// x.amax(1) of a small matrix spent as long on the device's thread in the
// boxed call of the CPU kernel and the captured arguments as in the reduction. The kernel is argmax's
// (REDUCE_ARG), keeping the list of dimensions in a small vector.

template <class Op, class OpOut>
at::Tensor extremum(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  std::optional<at::DimVector> shape = short_path_shape(self, dim, keepdim, std::nullopt);
  if (!shape.has_value()) return call_borrowed<Op>({self, dim.vec(), keepdim}).back().toTensor();
  c10::DeviceGuard guard(self.device());
  at::Tensor out = empty_openreg(*shape, self.scalar_type(), self.device());
  c10::openreg::launch_new_kernel<DimReduceCall<OpOut, c10::SmallVector<int64_t, 2>>>(
      KernelTensor(out), KernelTensor(self), c10::SmallVector<int64_t, 2>(dim.begin(), dim.end()),
      keepdim);
  return out;
}

at::Tensor amax(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  return extremum<at::_ops::amax, at::_ops::amax_out>(self, dim, keepdim);
}

at::Tensor amin(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  return extremum<at::_ops::amin, at::_ops::amin_out>(self, dim, keepdim);
}

// cumsum (positions, running totals, the end of a sampler's cumulative
// probabilities): the result has the input's shape, and any dimension goes.
// c10::maybe_wrap_dim raises PyTorch's IndexError for one out of range before
// anything is queued. Borrowed, a small cumsum's time would be set by the
// device's side of the call, the boxed CPU kernel, not by the sum.
struct CumsumCall {
  KernelTensor out;
  KernelTensor self;
  int64_t dim;

  void operator()() const {
    at::Tensor result = out.cpu();
    at::_ops::cumsum_out::redispatch(c10::DispatchKeySet(c10::DispatchKey::CPU), self.cpu(), dim,
                                     std::nullopt, result);
  }
};

at::Tensor cumsum(const at::Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  if (!plain_float(self) || (dtype.has_value() && *dtype != self.scalar_type())) {
    return call_borrowed<at::_ops::cumsum>({self, dim, dtype}).back().toTensor();
  }
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  c10::DeviceGuard guard(self.device());
  at::Tensor out = empty_openreg(self.sizes(), self.scalar_type(), self.device());
  c10::openreg::launch_new_kernel<CumsumCall>(KernelTensor(out), KernelTensor(self), d);
  return out;
}

// LITERALINCLUDE START: REDUCE_SQUARED_ERROR_KERNEL
// F.mse_loss(x, y) with a mean or a sum, in one pass over x and y. PyTorch's
// CPU kernel first writes every (x - y)^2 to a temporary as large as x, then
// reduces it: for 1 M floats, 4 MiB written and read again at every call.
// Here kLanes independent partial sums each add kRounds squares in the
// input's type (a loop the compiler turns into vector instructions of the
// machine's width, OPENREG_VECTOR_CLONES: lanes never mix, so no sum is
// reordered, whatever the width), then go into a double; blocks of
// kBlock elements are the parallel loop's unit, and their sums are added in
// block order, so the result is the same whatever the number of kernel
// threads. Not the CPU's bits (its reduction adds in another order): a
// difference of rounding, within the tolerances PyTorch's own tests compare
// float results with.
template <typename scalar_t>
struct SquaredErrorKernel {
  scalar_t* out;  // one element
  const scalar_t* x;
  const scalar_t* y;
  int64_t n;  // elements of x and y, at least 1
  bool mean;  // else the sum

  static constexpr int64_t kBlock = 4096;  // elements a block: the unit of the parallel loop
  static constexpr int kLanes = 16;
  static constexpr int kRounds = 16;  // a lane adds this many squares before they go to double

  OPENREG_VECTOR_CLONES static double block_sum(const scalar_t* x, const scalar_t* y, int64_t n) {
    double total = 0;
    for (int64_t i = 0; i < n;) {
      // A group: kLanes partial sums of kRounds squares each, then into `total`.
      scalar_t lanes[kLanes] = {};
      const int64_t end = std::min(n, i + kLanes * kRounds);
      for (; i + kLanes <= end; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) {
          scalar_t d = x[i + j] - y[i + j];
          lanes[j] += d * d;
        }
      }
      for (int j = 0; i < end; ++i, ++j) {  // a last, partial row of lanes
        scalar_t d = x[i] - y[i];
        lanes[j] += d * d;
      }
      for (scalar_t lane : lanes) total += lane;
    }
    return total;
  }

  void operator()() const {
    const scalar_t* a = c10::openreg::kernel_pointer(x);
    const scalar_t* b = c10::openreg::kernel_pointer(y);
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    c10::SmallVector<double, 64> sums(blocks);
    const int64_t grain = c10::openreg::kParallelElements / kBlock;
    c10::openreg::kernel_parallel_for(0, blocks, grain, [&](int64_t first, int64_t last) {
      for (int64_t k = first; k < last; ++k) {
        const int64_t begin = k * kBlock;
        sums[k] = block_sum(a + begin, b + begin, std::min(kBlock, n - begin));
      }
    });
    double total = 0;
    for (double s : sums) total += s;
    *c10::openreg::kernel_pointer(out) = static_cast<scalar_t>(mean ? total / n : total);
  }
};
// LITERALINCLUDE END: REDUCE_SQUARED_ERROR_KERNEL

// The one-pass kernel takes a mean or a sum over two contiguous float or
// double tensors of one shape on one device; everything else (no reduction,
// broadcasting with its warning, other dtypes, strided inputs, empty ones,
// PyTorch's errors) is PyTorch's mse_loss, borrowed.
static bool one_pass_squared_error(const at::Tensor& self, const at::Tensor& target,
                                   int64_t reduction) {
  const c10::ScalarType t = self.scalar_type();
  return reduction != at::Reduction::None && (t == at::kFloat || t == at::kDouble) &&
         target.scalar_type() == t && target.device() == self.device() &&
         self.sizes().equals(target.sizes()) && self.numel() > 0 && self.is_contiguous() &&
         target.is_contiguous() && !self.is_neg() && !target.is_neg();
}

at::Tensor mse_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  if (!one_pass_squared_error(self, target, reduction)) {
    return call_borrowed<at::_ops::mse_loss>({self, target, reduction}).back().toTensor();
  }
  c10::openreg::check_storage_fits(self);  // raw pointers skip KernelTensor's check
  c10::openreg::check_storage_fits(target);
  c10::DeviceGuard guard(self.device());
  at::Tensor out = empty_openreg({}, self.scalar_type(), self.device());
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "mse_loss", [&] {
    c10::openreg::launch_new_kernel<SquaredErrorKernel<scalar_t>>(
        out.mutable_data_ptr<scalar_t>(), self.const_data_ptr<scalar_t>(),
        target.const_data_ptr<scalar_t>(), self.numel(), reduction == at::Reduction::Mean);
  });
  return out;
}

// LITERALINCLUDE START: REDUCE_ALL_ANY
// torch.all(mask) and torch.any(mask) of a contiguous bool tensor, the end of
// `(x > 0).all()` and of many input checks. A bool is one byte, 0 or 1, so
// `all` is the AND of the bytes and `any` their OR: loops the compiler
// vectorizes (OPENREG_VECTOR_CLONES), in chunks of kChunk bytes that the kernel threads share.
// Borrowed, the host's side of the call would cost more than the CPU's whole
// reduction of a small mask. Other dtypes and reductions over dimensions
// are PyTorch's kernels, borrowed.
struct AllAnyKernel {
  bool* out;
  const bool* x;
  int64_t n;
  bool all;  // else any

  static constexpr int64_t kChunk = 64 * 1024;

  void operator()() const {
    const auto* bytes = reinterpret_cast<const unsigned char*>(c10::openreg::kernel_pointer(x));
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    c10::SmallVector<unsigned char, 64> parts(chunks);
    c10::openreg::kernel_parallel_for(0, chunks, 1, [&](int64_t first, int64_t last) {
      for (int64_t c = first; c < last; ++c) {
        parts[c] = fold(bytes + c * kChunk, std::min(kChunk, n - c * kChunk), all);
      }
    });
    bool result = all;  // all() of nothing is true, any() of nothing false
    for (unsigned char part : parts) result = all ? (result && part) : (result || part);
    *c10::openreg::kernel_pointer(out) = result;
  }

  // The AND (all) or OR (any) of `count` bytes.
  OPENREG_VECTOR_CLONES static unsigned char fold(const unsigned char* p, int64_t count, bool all) {
    unsigned char acc = all ? 1 : 0;
    if (all) {
      for (int64_t i = 0; i < count; ++i) acc &= p[i];
    } else {
      for (int64_t i = 0; i < count; ++i) acc |= p[i];
    }
    return acc;
  }
};

template <class Op, bool kAll>
at::Tensor all_any(const at::Tensor& self) {
  if (self.scalar_type() != at::kBool || !self.is_contiguous() || self.dim() > kMaxReductionDims) {
    return call_borrowed<Op>({self}).back().toTensor();
  }
  c10::openreg::check_storage_fits(self);  // raw pointers skip KernelTensor's check
  c10::DeviceGuard guard(self.device());
  at::Tensor out = empty_openreg({}, at::kBool, self.device());
  c10::openreg::launch_new_kernel<AllAnyKernel>(out.mutable_data_ptr<bool>(),
                                                self.const_data_ptr<bool>(), self.numel(), kAll);
  return out;
}

at::Tensor all(const at::Tensor& self) { return all_any<at::_ops::all, true>(self); }

at::Tensor any(const at::Tensor& self) { return all_any<at::_ops::any, false>(self); }
// LITERALINCLUDE END: REDUCE_ALL_ANY

}  // namespace at::native::openreg

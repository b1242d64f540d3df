// Binary.cpp: add, sub, mul and div on the device, with PyTorch's broadcasting and promotion.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/add.h>
#include <ATen/ops/div.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/sub.h>
#include <c10/core/DeviceGuard.h>

#include "Minimal.h"
#include "Native.h"
#include "Boxed.h"
#include "SameDevice.h"

namespace at::native::openreg {

namespace {
using c10::openreg::KernelTensor;
using c10::openreg::launch_kernel;

enum class BinaryOp { Add, Sub, Mul, Div };

// LITERALINCLUDE START: NATIVE_BINARY_RAW_KERNEL
// A hand-written device kernel: raw device pointers, turned into kernel-view
// addresses inside the kernel. Used for small contiguous operands of one
// dtype, where wrapping tensors for PyTorch's CPU loops costs more than the
// arithmetic. One loop per operator and operand kind, so the compiler
// vectorizes each, at the machine's vector width (OPENREG_VECTOR_CLONES);
// `ivdep` tells it that the output overlaps an input only exactly (in place),
// never in part: the host refused partial overlaps.
template <typename T>
struct RawBinaryKernel {
  BinaryOp op;
  T* out;
  const T* a;
  const T* b;  // nullptr: use `scalar` for every element
  T scalar;
  T alpha;
  int64_t n;

  template <class F>
  OPENREG_VECTOR_CLONES static void each(T* o, const T* x, const T* y, T scalar, int64_t n, F f) {
    if (y != nullptr) {
#pragma GCC ivdep
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
    } else {
#pragma GCC ivdep
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], scalar);
    }
  }

  void operator()() const {
    T* o = c10::openreg::kernel_pointer(out);
    const T* x = c10::openreg::kernel_pointer(a);
    const T* y = b != nullptr ? c10::openreg::kernel_pointer(b) : nullptr;
    T al = alpha;
    switch (op) {
      case BinaryOp::Add: each(o, x, y, scalar, n, [al](T l, T r) { return l + al * r; }); break;
      case BinaryOp::Sub: each(o, x, y, scalar, n, [al](T l, T r) { return l - al * r; }); break;
      case BinaryOp::Mul: each(o, x, y, scalar, n, [](T l, T r) { return l * r; }); break;
      case BinaryOp::Div: each(o, x, y, scalar, n, [](T l, T r) { return l / r; }); break;
    }
  }
};
// LITERALINCLUDE END: NATIVE_BINARY_RAW_KERNEL

// The raw loop runs on one thread. Past kParallelElements elements,
// PyTorch's vectorized loops run on the kernel threads and win: larger
// operands take them.
using c10::openreg::kParallelElements;

// LITERALINCLUDE START: NATIVE_TRY_RAW_KERNEL
// Launches the raw kernel when the operands allow it; returns false otherwise.
bool try_raw_kernel(BinaryOp op, at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                    const c10::Scalar& alpha) {
  c10::ScalarType dtype = out.scalar_type();
  bool b_scalar = b.is_cpu() && b.dim() == 0;
  if (out.numel() > kParallelElements || !out.is_contiguous() || !a.is_privateuseone() ||
      a.scalar_type() != dtype || a.sizes() != out.sizes() || !a.is_contiguous()) {
    return false;
  }
  if (!b_scalar && (b.scalar_type() != dtype || b.sizes() != out.sizes() || !b.is_contiguous())) {
    return false;
  }
  if (op == BinaryOp::Div && !c10::isFloatingType(dtype)) return false;
  for (const at::Tensor* t :
       {static_cast<const at::Tensor*>(&out), &a, &b}) {  // raw pointers skip KernelTensor's check
    if (t->is_privateuseone()) c10::openreg::check_storage_fits(*t);
  }
  auto launch = [&](auto zero) {
    using T = decltype(zero);
    launch_kernel(RawBinaryKernel<T>{op, out.mutable_data_ptr<T>(), a.const_data_ptr<T>(),
                                     b_scalar ? nullptr : b.const_data_ptr<T>(),
                                     b_scalar ? b.item().to<T>() : T(0), alpha.to<T>(),
                                     out.numel()});
    return true;
  };
  switch (dtype) {
    case at::kFloat: return launch(float{});
    case at::kDouble: return launch(double{});
    case at::kInt: return launch(int32_t{});
    case at::kLong: return launch(int64_t{});
    default: return false;
  }
}
// LITERALINCLUDE END: NATIVE_TRY_RAW_KERNEL

// The dtype and shape checks an out= or in-place result gets on the CPU, done
// before launch.
void check_result(const char* op, const at::Tensor& out, c10::ScalarType result_dtype,
                  c10::IntArrayRef result_shape) {
  TORCH_CHECK(c10::canCast(result_dtype, out.scalar_type()), "result type ", result_dtype,
              " can't be cast to the desired output type ", out.scalar_type());
  TORCH_CHECK(out.sizes() == result_shape, op, ": output with shape ", out.sizes(),
              " doesn't match the broadcast shape ", result_shape);
}

struct Result {
  c10::Device device;
  c10::ScalarType dtype;
  at::DimVector shape;
};

// LITERALINCLUDE START: NATIVE_PLAN
Result plan(const char* op, const at::Tensor& self, const at::Tensor& other, bool true_divide,
            const c10::Scalar* alpha = nullptr) {
  c10::Device device = common_device(op, {self, other});
  c10::ScalarType dtype = at::result_type(self, other);
  // alpha must fit the result type: checked here, not inside the kernel.
  if (alpha != nullptr) at::native::alpha_check(dtype, *alpha);
  if (true_divide && c10::isIntegralType(dtype, /*includeBool=*/true)) {
    dtype = c10::typeMetaToScalarType(c10::get_default_dtype());
  }
  return {device, dtype, at::infer_size_dimvector(self.sizes(), other.sizes())};
}
// LITERALINCLUDE END: NATIVE_PLAN

// LITERALINCLUDE START: NATIVE_BINARY_LAUNCH
// Queues `kernel(out, a, b)` with all three seen as CPU tensors over device
// memory: PyTorch's own vectorized CPU loops run on the device's data.
template <class Kernel>
at::Tensor& launch_binary(BinaryOp op, const c10::Scalar& alpha, at::Tensor& out,
                          const at::Tensor& a, const at::Tensor& b, Kernel kernel) {
  if (out.numel() == 0) return out;
  // PyTorch's overlap rules, checked on the host as the CPU's TensorIterator
  // does: an output that overlaps itself, or an input in part
  // (x[1:].add_(x[:-1])), is refused. The raw loop would run regardless.
  at::assert_no_internal_overlap(out);
  at::assert_no_partial_overlap(out, a);
  at::assert_no_partial_overlap(out, b);
  c10::DeviceGuard guard(out.device());
  if (try_raw_kernel(op, out, a, b, alpha)) return out;
  launch_kernel([out = KernelTensor(out), a = Operand(a), b = Operand(b), kernel] {
    at::Tensor result = out.cpu();
    kernel(result, a.cpu(), b.cpu());
  });
  return out;
}

// The three forms of each op: a new result, in place, and out=.
template <class Kernel>
at::Tensor binary(BinaryOp kind, const char* op, const at::Tensor& self, const at::Tensor& other,
                  Kernel kernel, const c10::Scalar& alpha = 1) {
  Result r = plan(op, self, other, kind == BinaryOp::Div, kind <= BinaryOp::Sub ? &alpha : nullptr);
  // Both operands decide the result's layout, as in PyTorch.
  at::Tensor out = empty_openreg_like(self, r.shape, r.dtype, r.device, other);
  return launch_binary(kind, alpha, out, self, other, kernel);
}
// LITERALINCLUDE END: NATIVE_BINARY_LAUNCH

// LITERALINCLUDE START: NATIVE_BINARY_INPLACE
template <class Kernel>
at::Tensor& binary_inplace(BinaryOp kind, const char* op, at::Tensor& self, const at::Tensor& other,
                           Kernel kernel, const c10::Scalar& alpha = 1) {
  Result r = plan(op, self, other, kind == BinaryOp::Div, kind <= BinaryOp::Sub ? &alpha : nullptr);
  TORCH_CHECK(self.is_privateuseone(), op, ": the in-place target must be an openreg tensor");
  check_result(op, self, r.dtype, r.shape);
  return launch_binary(kind, alpha, self, self, other, kernel);
}
// LITERALINCLUDE END: NATIVE_BINARY_INPLACE

// LITERALINCLUDE START: NATIVE_BINARY_OUT
template <class Kernel>
at::Tensor& binary_out(BinaryOp kind, const char* op, const at::Tensor& self,
                       const at::Tensor& other, at::Tensor& out, Kernel kernel,
                       const c10::Scalar& alpha = 1) {
  Result r = plan(op, self, other, kind == BinaryOp::Div, kind <= BinaryOp::Sub ? &alpha : nullptr);
  TORCH_CHECK(out.device() == r.device, "Expected out tensor to be on ", r.device, " but got ",
              out.device());
  if (at::native::resize_output(out, r.shape)) {
    // A resized out= takes the layout a new result would have, as on the CPU.
    if (auto strides = result_strides(self, r.shape, other)) out.as_strided_(r.shape, *strides);
  }
  check_result(op, out, r.dtype, r.shape);
  return launch_binary(kind, alpha, out, self, other, kernel);
}
// LITERALINCLUDE END: NATIVE_BINARY_OUT

// LITERALINCLUDE START: NATIVE_DEF_ADD_KERNEL
auto add_kernel(const c10::Scalar& alpha) {
  return [alpha](at::Tensor& o, const at::Tensor& a, const at::Tensor& b) {
    at::add_out(o, a, b, alpha);
  };
}
// LITERALINCLUDE END: NATIVE_DEF_ADD_KERNEL

auto sub_kernel(const c10::Scalar& alpha) {
  return [alpha](at::Tensor& o, const at::Tensor& a, const at::Tensor& b) {
    at::sub_out(o, a, b, alpha);
  };
}
void mul_kernel(at::Tensor& o, const at::Tensor& a, const at::Tensor& b) { at::mul_out(o, a, b); }
void div_kernel(at::Tensor& o, const at::Tensor& a, const at::Tensor& b) { at::div_out(o, a, b); }
}  // namespace

at::Tensor add(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return binary(BinaryOp::Add, "add", self, other, add_kernel(alpha), alpha);
}

at::Tensor& add_(at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return binary_inplace(BinaryOp::Add, "add_", self, other, add_kernel(alpha), alpha);
}

at::Tensor& add_out(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha,
                    at::Tensor& out) {
  return binary_out(BinaryOp::Add, "add.out", self, other, out, add_kernel(alpha), alpha);
}

at::Tensor sub(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  at::native::sub_check(self, other);
  return binary(BinaryOp::Sub, "sub", self, other, sub_kernel(alpha), alpha);
}

at::Tensor& sub_(at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  at::native::sub_check(self, other);
  return binary_inplace(BinaryOp::Sub, "sub_", self, other, sub_kernel(alpha), alpha);
}

at::Tensor& sub_out(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha,
                    at::Tensor& out) {
  at::native::sub_check(self, other);
  return binary_out(BinaryOp::Sub, "sub.out", self, other, out, sub_kernel(alpha), alpha);
}

at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
  return binary(BinaryOp::Mul, "mul", self, other, mul_kernel);
}

at::Tensor& mul_(at::Tensor& self, const at::Tensor& other) {
  return binary_inplace(BinaryOp::Mul, "mul_", self, other, mul_kernel);
}

at::Tensor& mul_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return binary_out(BinaryOp::Mul, "mul.out", self, other, out, mul_kernel);
}

at::Tensor div(const at::Tensor& self, const at::Tensor& other) {
  return binary(BinaryOp::Div, "div", self, other, div_kernel);
}

at::Tensor& div_(at::Tensor& self, const at::Tensor& other) {
  return binary_inplace(BinaryOp::Div, "div_", self, other, div_kernel);
}

at::Tensor& div_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return binary_out(BinaryOp::Div, "div.out", self, other, out, div_kernel);
}

}  // namespace at::native::openreg

// Binary.cpp: add, sub, mul and div on the device, with PyTorch's broadcasting and promotion.
#include <ATen/ExpandUtils.h>
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
#include "Operand.h"

namespace at::native::openreg {

namespace {
using c10::openreg::KernelTensor;
using c10::openreg::launch_kernel;

struct Result {
  c10::Device device;
  c10::ScalarType dtype;
  at::DimVector shape;
};

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

// LITERALINCLUDE START: NATIVE_BINARY_LAUNCH
// Queues `kernel(out, a, b)` with all three seen as CPU tensors over device
// memory: PyTorch's own vectorized CPU loops run on the device's data.
template <class Kernel>
at::Tensor& launch_binary(at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                          Kernel kernel) {
  if (out.numel() == 0) return out;
  c10::DeviceGuard guard(out.device());
  launch_kernel([out = KernelTensor(out), a = Operand(a), b = Operand(b), kernel] {
    at::Tensor result = out.cpu();
    kernel(result, a.cpu(), b.cpu());
  });
  return out;
}

template <class Kernel>
at::Tensor binary(const char* op, const at::Tensor& self, const at::Tensor& other,
                  bool true_divide, Kernel kernel, const c10::Scalar* alpha = nullptr) {
  Result r = plan(op, self, other, true_divide, alpha);
  at::Tensor out = empty_openreg(r.shape, r.dtype, r.device);
  return launch_binary(out, self, other, kernel);
}
// LITERALINCLUDE END: NATIVE_BINARY_LAUNCH

template <class Kernel>
at::Tensor& binary_inplace(const char* op, at::Tensor& self, const at::Tensor& other,
                           bool true_divide, Kernel kernel, const c10::Scalar* alpha = nullptr) {
  Result r = plan(op, self, other, true_divide, alpha);
  TORCH_CHECK(self.is_privateuseone(), op, ": the in-place target must be an openreg tensor");
  check_result(op, self, r.dtype, r.shape);
  return launch_binary(self, self, other, kernel);
}

template <class Kernel>
at::Tensor& binary_out(const char* op, const at::Tensor& self, const at::Tensor& other,
                       at::Tensor& out, bool true_divide, Kernel kernel,
                       const c10::Scalar* alpha = nullptr) {
  Result r = plan(op, self, other, true_divide, alpha);
  TORCH_CHECK(out.device() == r.device, "Expected out tensor to be on ", r.device, " but got ",
              out.device());
  at::native::resize_output(out, r.shape);
  check_result(op, out, r.dtype, r.shape);
  return launch_binary(out, self, other, kernel);
}

auto add_kernel(const c10::Scalar& alpha) {
  return [alpha](at::Tensor& o, const at::Tensor& a, const at::Tensor& b) {
    at::add_out(o, a, b, alpha);
  };
}
auto sub_kernel(const c10::Scalar& alpha) {
  return [alpha](at::Tensor& o, const at::Tensor& a, const at::Tensor& b) {
    at::sub_out(o, a, b, alpha);
  };
}
void mul_kernel(at::Tensor& o, const at::Tensor& a, const at::Tensor& b) { at::mul_out(o, a, b); }
void div_kernel(at::Tensor& o, const at::Tensor& a, const at::Tensor& b) { at::div_out(o, a, b); }
}  // namespace

// LITERALINCLUDE START: NATIVE_ADD
at::Tensor add(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return binary("add", self, other, false, add_kernel(alpha), &alpha);
}
// LITERALINCLUDE END: NATIVE_ADD

at::Tensor& add_(at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return binary_inplace("add_", self, other, false, add_kernel(alpha), &alpha);
}

at::Tensor& add_out(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha,
                    at::Tensor& out) {
  return binary_out("add.out", self, other, out, false, add_kernel(alpha), &alpha);
}

at::Tensor sub(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  at::native::sub_check(self, other);
  return binary("sub", self, other, false, sub_kernel(alpha), &alpha);
}

at::Tensor& sub_(at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  at::native::sub_check(self, other);
  return binary_inplace("sub_", self, other, false, sub_kernel(alpha), &alpha);
}

at::Tensor& sub_out(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha,
                    at::Tensor& out) {
  at::native::sub_check(self, other);
  return binary_out("sub.out", self, other, out, false, sub_kernel(alpha), &alpha);
}

at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
  return binary("mul", self, other, false, mul_kernel);
}

at::Tensor& mul_(at::Tensor& self, const at::Tensor& other) {
  return binary_inplace("mul_", self, other, false, mul_kernel);
}

at::Tensor& mul_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return binary_out("mul.out", self, other, out, false, mul_kernel);
}

at::Tensor div(const at::Tensor& self, const at::Tensor& other) {
  return binary("div", self, other, true, div_kernel);
}

at::Tensor& div_(at::Tensor& self, const at::Tensor& other) {
  return binary_inplace("div_", self, other, true, div_kernel);
}

at::Tensor& div_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return binary_out("div.out", self, other, out, true, div_kernel);
}

}  // namespace at::native::openreg

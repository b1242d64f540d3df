// Blas.cpp: matrix multiplication on the device.
// LITERALINCLUDE START: NATIVE_BLAS_INCLUDES
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>
#include <c10/core/DeviceGuard.h>

#include "Minimal.h"
#include "Native.h"
#include "Operand.h"
// LITERALINCLUDE END: NATIVE_BLAS_INCLUDES

namespace at::native::openreg {

namespace {
using c10::openreg::KernelTensor;
using c10::openreg::launch_kernel;

// LITERALINCLUDE START: NATIVE_CHECK_MM
void check_mm(const at::Tensor& self, const at::Tensor& mat2) {
  common_device("mm", {self, mat2});
  TORCH_CHECK(self.dim() == 2, "self must be a matrix");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(self.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (",
              self.size(0), "x", self.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(),
              "expected m1 and m2 to have the same dtype, but got: ", self.scalar_type(), " != ",
              mat2.scalar_type());
}
// LITERALINCLUDE END: NATIVE_CHECK_MM

// LITERALINCLUDE START: NATIVE_MM_LAUNCH
at::Tensor& launch_mm(at::Tensor& out, const at::Tensor& self, const at::Tensor& mat2) {
  if (out.numel() == 0) return out;
  c10::DeviceGuard guard(out.device());
  launch_kernel([out = KernelTensor(out), a = KernelTensor(self), b = KernelTensor(mat2)] {
    at::Tensor result = out.cpu();
    at::mm_out(result, a.cpu(), b.cpu());
  });
  return out;
}
// LITERALINCLUDE END: NATIVE_MM_LAUNCH
}  // namespace

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  check_mm(self, mat2);
  at::Tensor out = empty_openreg({self.size(0), mat2.size(1)}, self.scalar_type(), self.device());
  return launch_mm(out, self, mat2);
}

// LITERALINCLUDE START: NATIVE_MM_OUT
at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  check_mm(self, mat2);
  TORCH_CHECK(out.device() == self.device(), "Expected out tensor to be on ", self.device(),
              " but got ", out.device());
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  at::native::resize_output(out, {self.size(0), mat2.size(1)});
  return launch_mm(out, self, mat2);
}
// LITERALINCLUDE END: NATIVE_MM_OUT

}  // namespace at::native::openreg

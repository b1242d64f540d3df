// Blas.cpp: matrix multiplication on the device.
#include <ATen/native/Resize.h>
#include <ATen/ExpandUtils.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>
#include <c10/core/DeviceGuard.h>

#include "../../amp/ComputeType.h"
#include "../../runtime/OpenRegLaunch.h"
#include "Minimal.h"
#include "Native.h"
#include "SameDevice.h"

namespace at::native::openreg {

namespace {
using c10::openreg::KernelTensor;
using c10::openreg::launch_kernel;

void check_mm(const at::Tensor& self, const at::Tensor& mat2) {
  common_device("mm", {self, mat2});
  TORCH_CHECK(self.dim() == 2, "self must be a matrix");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(self.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (",
              self.size(0), "x", self.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(),
              "expected m1 and m2 to have the same dtype, but got: ", self.scalar_type(),
              " != ", mat2.scalar_type());
}

// Matrix products run PyTorch's CPU kernels on device memory; for float16 and
// bfloat16 those accumulate in float32 and round once, as CUDA's do
// (tests/test_mixed_precision.py checks it).
// LITERALINCLUDE START: NATIVE_MM_LAUNCH
at::Tensor& launch_mm(at::Tensor& out, const at::Tensor& self, const at::Tensor& mat2) {
  if (out.numel() == 0) return out;
  c10::DeviceGuard guard(out.device());
  launch_kernel([out = KernelTensor(out), a = KernelTensor(self), b = KernelTensor(mat2)] {
    at::Tensor result = out.cpu();
    if (result.scalar_type() == at::kHalf) {  // see in_compute_type
      result.copy_(at::mm(in_compute_type(a.cpu()), in_compute_type(b.cpu())));
    } else {
      at::mm_out(result, a.cpu(), b.cpu());
    }
  });
  return out;
}
// LITERALINCLUDE END: NATIVE_MM_LAUNCH

void check_addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2) {
  common_device("addmm", {self, mat1, mat2});
  TORCH_CHECK(mat1.dim() == 2, "mat1 must be a matrix, got ", mat1.dim(), "-D tensor");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix, got ", mat2.dim(), "-D tensor");
  TORCH_CHECK(mat1.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (",
              mat1.size(0), "x", mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  TORCH_CHECK(self.scalar_type() == mat1.scalar_type() && mat1.scalar_type() == mat2.scalar_type(),
              "self and mat2 must have the same dtype, but got ", self.scalar_type(), ", ",
              mat1.scalar_type(), " and ", mat2.scalar_type());
  at::infer_size({mat1.size(0), mat2.size(1)}, self.sizes());  // self must broadcast
}

// addmm is what nn.Linear runs on a batch of vectors: float16 computes in
// float32 like mm (see in_compute_type).
at::Tensor& launch_addmm(at::Tensor& out, const at::Tensor& self, const at::Tensor& mat1,
                         const at::Tensor& mat2, const c10::Scalar& beta,
                         const c10::Scalar& alpha) {
  if (out.numel() == 0) return out;
  c10::DeviceGuard guard(out.device());
  launch_kernel([out = KernelTensor(out), s = KernelTensor(self), a = KernelTensor(mat1),
                 b = KernelTensor(mat2), beta, alpha] {
    at::Tensor result = out.cpu();
    if (result.scalar_type() == at::kHalf) {
      result.copy_(at::addmm(in_compute_type(s.cpu()), in_compute_type(a.cpu()),
                             in_compute_type(b.cpu()), beta, alpha));
    } else {  // self may be out itself (addmm_): the CPU kernel handles that aliasing
      at::addmm_out(result, s.cpu(), a.cpu(), b.cpu(), beta, alpha);
    }
  });
  return out;
}

// bmm and baddbmm: batches of products (attention's math path is made of them).
void check_baddbmm(const char* op, const at::Tensor& self, const at::Tensor& batch1,
                   const at::Tensor& batch2) {
  common_device(op, {self, batch1, batch2});
  TORCH_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(batch1.size(0) == batch2.size(0),
              "batch1 and batch2 must have same number of "
              "batches, got ",
              batch1.size(0), " and ", batch2.size(0));
  TORCH_CHECK(batch1.size(2) == batch2.size(1),
              "Expected size for first two dimensions of "
              "batch2 tensor to be: [",
              batch1.size(0), ", ", batch1.size(2), "] but got: [", batch2.size(0), ", ",
              batch2.size(1), "].");
  TORCH_CHECK(batch1.scalar_type() == batch2.scalar_type(), "expected scalar type ",
              batch1.scalar_type(), " but found ", batch2.scalar_type(), " (", op, ")");
  if (self.defined()) {  // baddbmm: self must match the batches and broadcast to the result
    TORCH_CHECK(self.scalar_type() == batch1.scalar_type(), "expected scalar type ",
                batch1.scalar_type(), " but found ", self.scalar_type(), " (", op, ")");
    at::infer_size({batch1.size(0), batch1.size(1), batch2.size(2)}, self.sizes());
  }
}

// self undefined: bmm; otherwise baddbmm. float16 computes in float32.
at::Tensor& launch_baddbmm(at::Tensor& out, const at::Tensor& self, const at::Tensor& batch1,
                           const at::Tensor& batch2, const c10::Scalar& beta,
                           const c10::Scalar& alpha) {
  if (out.numel() == 0) return out;
  c10::DeviceGuard guard(out.device());
  std::optional<KernelTensor> s =
      self.defined() ? std::optional<KernelTensor>(KernelTensor(self)) : std::nullopt;
  launch_kernel([out = KernelTensor(out), s, b1 = KernelTensor(batch1), b2 = KernelTensor(batch2),
                 beta, alpha] {
    at::Tensor result = out.cpu();
    if (result.scalar_type() == at::kHalf) {  // see in_compute_type
      at::Tensor product = s ? at::baddbmm(in_compute_type(s->cpu()), in_compute_type(b1.cpu()),
                                           in_compute_type(b2.cpu()), beta, alpha)
                             : at::bmm(in_compute_type(b1.cpu()), in_compute_type(b2.cpu()));
      result.copy_(product);
    } else if (s) {  // self may be out itself (baddbmm_): the CPU kernel handles that aliasing
      at::baddbmm_out(result, s->cpu(), b1.cpu(), b2.cpu(), beta, alpha);
    } else {
      at::bmm_out(result, b1.cpu(), b2.cpu());
    }
  });
  return out;
}

void check_addbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2) {
  common_device("addbmm", {self, batch1, batch2});
  TORCH_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(batch1.size(0) == batch2.size(0),
              "batch1 and batch2 must have same number of "
              "batches, got ",
              batch1.size(0), " and ", batch2.size(0));
  TORCH_CHECK(batch1.size(2) == batch2.size(1), "Incompatible matrix sizes for bmm (",
              batch1.size(1), "x", batch1.size(2), " and ", batch2.size(1), "x", batch2.size(2),
              ")");
  TORCH_CHECK(
      self.scalar_type() == batch1.scalar_type() && batch1.scalar_type() == batch2.scalar_type(),
      "addbmm: expected self, batch1 and batch2 to have the same dtype, but got: ",
      self.scalar_type(), ", ", batch1.scalar_type(), " and ", batch2.scalar_type());
  at::infer_size({batch1.size(1), batch2.size(2)}, self.sizes());  // self must broadcast
}

at::Tensor& launch_addbmm(at::Tensor& out, const at::Tensor& self, const at::Tensor& batch1,
                          const at::Tensor& batch2, const c10::Scalar& beta,
                          const c10::Scalar& alpha) {
  if (out.numel() == 0) return out;
  c10::DeviceGuard guard(out.device());
  launch_kernel([out = KernelTensor(out), s = KernelTensor(self), b1 = KernelTensor(batch1),
                 b2 = KernelTensor(batch2), beta, alpha, n = batch1.size(1),
                 bk = batch1.size(0) * batch1.size(2), p = batch2.size(2)] {
    // One product over all batches at once, (n, b*k) x (b*k, p), so the sum
    // over batches is accumulated with the rest in float32, as on CUDA (a loop
    // of addmm_ would round to bfloat16 after every batch).
    at::Tensor lhs = b1.cpu().transpose(0, 1).reshape({n, bk});
    at::Tensor rhs = b2.cpu().reshape({bk, p});
    at::Tensor result = out.cpu();
    if (result.scalar_type() == at::kHalf) {  // see in_compute_type
      result.copy_(at::addmm(in_compute_type(s.cpu()), in_compute_type(lhs), in_compute_type(rhs),
                             beta, alpha));
    } else {  // self may be out itself (addbmm_): the CPU kernel handles that aliasing
      at::addmm_out(result, s.cpu(), lhs, rhs, beta, alpha);
    }
  });
  return out;
}
}  // namespace

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                 const c10::Scalar& beta, const c10::Scalar& alpha) {
  check_addmm(self, mat1, mat2);
  at::Tensor out = empty_openreg({mat1.size(0), mat2.size(1)}, self.scalar_type(), self.device());
  return launch_addmm(out, self, mat1, mat2, beta, alpha);
}

at::Tensor& addmm_(at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                   const c10::Scalar& beta, const c10::Scalar& alpha) {
  check_addmm(self, mat1, mat2);
  TORCH_CHECK(self.sizes() == c10::IntArrayRef({mat1.size(0), mat2.size(1)}),
              "addmm_: self of shape ", self.sizes(), " does not match the product's shape [",
              mat1.size(0), ", ", mat2.size(1), "]");
  return launch_addmm(self, self, mat1, mat2, beta, alpha);
}

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                      const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  check_addmm(self, mat1, mat2);
  TORCH_CHECK(out.device() == self.device(), "Expected out tensor to be on ", self.device(),
              " but got ", out.device());
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  at::native::resize_output(out, {mat1.size(0), mat2.size(1)});
  return launch_addmm(out, self, mat1, mat2, beta, alpha);
}

at::Tensor bmm(const at::Tensor& self, const at::Tensor& mat2) {
  check_baddbmm("bmm", at::Tensor(), self, mat2);
  at::Tensor out =
      empty_openreg({self.size(0), self.size(1), mat2.size(2)}, self.scalar_type(), self.device());
  return launch_baddbmm(out, at::Tensor(), self, mat2, 0, 1);
}

at::Tensor& bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  check_baddbmm("bmm", at::Tensor(), self, mat2);
  TORCH_CHECK(out.device() == self.device(), "Expected out tensor to be on ", self.device(),
              " but got ", out.device());
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  at::native::resize_output(out, {self.size(0), self.size(1), mat2.size(2)});
  return launch_baddbmm(out, at::Tensor(), self, mat2, 0, 1);
}

at::Tensor baddbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                   const c10::Scalar& beta, const c10::Scalar& alpha) {
  check_baddbmm("baddbmm", self, batch1, batch2);
  at::Tensor out = empty_openreg({batch1.size(0), batch1.size(1), batch2.size(2)},
                                 self.scalar_type(), self.device());
  return launch_baddbmm(out, self, batch1, batch2, beta, alpha);
}

at::Tensor& baddbmm_(at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                     const c10::Scalar& beta, const c10::Scalar& alpha) {
  check_baddbmm("baddbmm_", self, batch1, batch2);
  TORCH_CHECK(self.sizes() == c10::IntArrayRef({batch1.size(0), batch1.size(1), batch2.size(2)}),
              "baddbmm_: self of shape ", self.sizes(), " does not match the product's shape");
  return launch_baddbmm(self, self, batch1, batch2, beta, alpha);
}

at::Tensor& baddbmm_out(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                        const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  check_baddbmm("baddbmm", self, batch1, batch2);
  TORCH_CHECK(out.device() == self.device(), "Expected out tensor to be on ", self.device(),
              " but got ", out.device());
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  at::native::resize_output(out, {batch1.size(0), batch1.size(1), batch2.size(2)});
  return launch_baddbmm(out, self, batch1, batch2, beta, alpha);
}

at::Tensor addbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                  const c10::Scalar& beta, const c10::Scalar& alpha) {
  check_addbmm(self, batch1, batch2);
  at::Tensor out =
      empty_openreg({batch1.size(1), batch2.size(2)}, self.scalar_type(), self.device());
  return launch_addbmm(out, self, batch1, batch2, beta, alpha);
}

at::Tensor& addbmm_(at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                    const c10::Scalar& beta, const c10::Scalar& alpha) {
  check_addbmm(self, batch1, batch2);
  TORCH_CHECK(self.sizes() == c10::IntArrayRef({batch1.size(1), batch2.size(2)}),
              "addbmm_: self of shape ", self.sizes(), " does not match the product's shape [",
              batch1.size(1), ", ", batch2.size(2), "]");
  return launch_addbmm(self, self, batch1, batch2, beta, alpha);
}

at::Tensor& addbmm_out(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                       const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  check_addbmm(self, batch1, batch2);
  TORCH_CHECK(out.device() == self.device(), "Expected out tensor to be on ", self.device(),
              " but got ", out.device());
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  at::native::resize_output(out, {batch1.size(1), batch2.size(2)});
  return launch_addbmm(out, self, batch1, batch2, beta, alpha);
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  check_mm(self, mat2);
  at::Tensor out = empty_openreg({self.size(0), mat2.size(1)}, self.scalar_type(), self.device());
  return launch_mm(out, self, mat2);
}

at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  check_mm(self, mat2);
  TORCH_CHECK(out.device() == self.device(), "Expected out tensor to be on ", self.device(),
              " but got ", out.device());
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  at::native::resize_output(out, {self.size(0), mat2.size(1)});
  return launch_mm(out, self, mat2);
}

}  // namespace at::native::openreg

// Fill.cpp: fill_ and zero_ on the device (what torch.zeros and torch.full use).
#include <ATen/Parallel.h>
#include <ATen/ops/fill.h>
#include <c10/core/DeviceGuard.h>

#include <cstring>

#include "../../runtime/OpenRegLaunch.h"
#include "Native.h"

namespace at::native::openreg {

// LITERALINCLUDE START: FILL_KERNELS
at::Tensor& fill_(at::Tensor& self, const c10::Scalar& value) {
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  c10::openreg::launch_kernel(
      [self = c10::openreg::KernelTensor(self), value] { self.cpu().fill_(value); });
  return self;
}

at::Tensor& zero_(at::Tensor& self) {
  if (self.numel() == 0) return self;
  if (!self.is_non_overlapping_and_dense()) return openreg::fill_(self, 0);
  // Zero is all-zero bytes for every dtype: a memset, queued as a kernel, split
  // across the kernel's threads as PyTorch's CPU fill_ is (128 KiB a piece at least).
  c10::DeviceGuard guard(self.device());
  c10::openreg::check_storage_fits(self);
  struct ZeroKernel {
    void* data;
    size_t bytes;
    void operator()() const {
      char* p = static_cast<char*>(c10::openreg::kernel_pointer(data));
      c10::openreg::kernel_parallel_for(
          0, static_cast<int64_t>(bytes), 128 * 1024,
          [&](int64_t begin, int64_t end) { std::memset(p + begin, 0, end - begin); });
    }
  };
  c10::openreg::launch_kernel(
      ZeroKernel{self.mutable_data_ptr(), static_cast<size_t>(self.numel()) * self.element_size()});
  return self;
}
// LITERALINCLUDE END: FILL_KERNELS

}  // namespace at::native::openreg

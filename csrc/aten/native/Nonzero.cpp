// Nonzero.cpp: nonzero and masked_select on the device, with the one wait a GPU makes for them.
// LITERALINCLUDE START: NONZERO_INCLUDES
#include <ATen/ExpandUtils.h>
#include <ATen/ops/count_nonzero.h>
#include <ATen/ops/masked_select.h>
#include <ATen/ops/nonzero.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <limits>
#include <memory>

#include "../../runtime/OpenRegLaunch.h"
#include "Minimal.h"
#include "Operand.h"
// LITERALINCLUDE END: NONZERO_INCLUDES

namespace at::native::openreg {

namespace {
using c10::openreg::KernelTensor;
using c10::openreg::launch_kernel;

// LITERALINCLUDE START: NONZERO_KERNEL
// The result's size is the number of nonzero elements, which only the data
// knows. A first kernel counts them and the host waits for the count (the
// synchronization CUDA's nonzero makes too); the result is then allocated on
// the device at its exact size, and a second kernel, queued without waiting,
// writes the indices straight into it with PyTorch's CPU kernel. Borrowed, the
// CPU kernel wrote host memory that was then copied over: 1.35x the CPU at 1 M.
//
// count_on_device launches the counting kernel and waits for its result.
int64_t count_on_device(const char* op, const at::Tensor& t) {
  auto stream = c10::openreg::getCurrentOpenRegStream();
  int capturing = 0;
  OPENREG_CHECK(orStreamIsCapturing(stream.stream(), &capturing));
  TORCH_CHECK(!capturing, op, " has outputs whose shapes depend on the data: it synchronizes "
              "with the device, which a stream being captured into a graph cannot do");
  auto count = std::make_shared<int64_t>(0);
  launch_kernel([in = KernelTensor(t), count] {
    *count = at::count_nonzero(in.cpu()).item<int64_t>();
  });
  stream.synchronize();
  return *count;
}

at::Tensor nonzero(const at::Tensor& self) {
  TORCH_CHECK(self.numel() < std::numeric_limits<int>::max(), "nonzero is not supported for "
              "tensors with more than INT_MAX elements, but got a tensor of ", self.numel(),
              " elements");
  c10::DeviceGuard guard(self.device());
  const int64_t count = count_on_device("aten::nonzero", self);
  at::Tensor out = empty_openreg({count, self.dim()}, at::kLong, self.device());
  if (out.numel() > 0) {
    launch_kernel([o = KernelTensor(out), in = KernelTensor(self)] {
      at::Tensor indices = o.cpu();  // exactly the size nonzero_out wants: it writes in place
      at::nonzero_out(indices, in.cpu());
    });
  }
  return out;
}
// LITERALINCLUDE END: NONZERO_KERNEL

// LITERALINCLUDE START: NONZERO_MASKED_SELECT
// masked_select the same way: count the mask (broadcast to the common shape),
// allocate, and let PyTorch's CPU kernel write the selected values in place.
at::Tensor masked_select(const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  c10::Device device = common_device("masked_select", {self, mask});
  TORCH_CHECK(self.is_privateuseone() && mask.is_privateuseone(), "masked_select: expected "
              "both tensors on ", device);
  at::DimVector shape = at::infer_size_dimvector(self.sizes(), mask.sizes());
  c10::DeviceGuard guard(device);
  const int64_t count = count_on_device("aten::masked_select", mask.expand(shape));
  at::Tensor out = empty_openreg({count}, self.scalar_type(), device);
  if (count > 0) {
    launch_kernel([o = KernelTensor(out), in = KernelTensor(self), m = KernelTensor(mask)] {
      at::Tensor values = o.cpu();  // the size masked_select_out computes: it writes in place
      at::masked_select_out(values, in.cpu(), m.cpu());
    });
  }
  return out;
}
// LITERALINCLUDE END: NONZERO_MASKED_SELECT
}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nonzero", TORCH_FN(nonzero));
  m.impl("masked_select", TORCH_FN(masked_select));
}

}  // namespace at::native::openreg

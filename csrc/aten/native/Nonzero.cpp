// Nonzero.cpp: nonzero and masked_select on the device, with the wait for the data a GPU makes too.
#include "Nonzero.h"

#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/ops/count_nonzero.h>
#include <ATen/ops/masked_select.h>
#include <ATen/ops/nonzero.h>
#include <c10/core/DeviceGuard.h>

#include <cstring>
#include <limits>
#include <memory>

#include "../../runtime/OpenRegLaunch.h"
#include "Borrowed.h"
#include "Minimal.h"
#include "SameDevice.h"

namespace at::native::openreg {

namespace {
using c10::openreg::KernelTensor;
using c10::openreg::launch_kernel;

// Contiguous tensors of a real dtype (masks, comparisons: the common case)
// are counted and scanned by plain loops over the kernel view. PyTorch's
// count_nonzero builds a tensor and a reduction for one number, and its CPU
// nonzero counts again before it writes.
bool raw_scannable(const at::Tensor& t) {
  return t.is_contiguous() && !t.is_complex() && !t.is_neg() && t.numel() > 0;
}
constexpr int64_t kMaxRawDims = 8;
bool raw_nonzero(const at::Tensor& t) {
  return raw_scannable(t) && t.dim() >= 1 && t.dim() <= kMaxRawDims;
}

template <typename T>
int64_t count_raw(const T* x, int64_t n) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += x[i] != T(0);
  return count;
}

// The write loops are branch-free: each element goes to the next free slot of
// a small local block whatever its value, and the slot advances only when the
// element is selected; full blocks are copied out. With a random mask an `if`
// would mispredict on every other element.
constexpr int64_t kBlock = 256;  // elements per local block

// The indices of x's nonzero elements, row by row: `sizes` is x's shape (1 to
// kMaxRawDims dimensions), `out` holds count x sizes.size() int64s.
template <typename T>
struct RawNonzeroKernel {
  int64_t* out;
  const T* in;
  c10::SmallVector<int64_t, 6> sizes;

  void operator()() const {
    const T* x = c10::openreg::kernel_pointer(in);
    int64_t* o = c10::openreg::kernel_pointer(out);
    const size_t ndim = sizes.size();
    const int64_t last = sizes.back();
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < ndim; ++d) rows *= sizes[d];
    int64_t coords[kMaxRawDims] = {};  // the current row's leading coordinates
    int64_t block[kBlock * kMaxRawDims];
    int64_t filled = 0;
    for (int64_t r = 0; r < rows; ++r, x += last) {
      for (int64_t j = 0; j < last; ++j) {
        int64_t* slot = block + filled * ndim;
        for (size_t d = 0; d + 1 < ndim; ++d) slot[d] = coords[d];
        slot[ndim - 1] = j;
        filled += x[j] != T(0);
        if (filled == kBlock) {
          std::memcpy(o, block, kBlock * ndim * sizeof(int64_t));
          o += kBlock * ndim;
          filled = 0;
        }
      }
      for (size_t d = ndim - 1; d-- > 0;) {  // next row: carry through the leading dimensions
        if (++coords[d] < sizes[d]) break;
        coords[d] = 0;
      }
    }
    std::memcpy(o, block, filled * ndim * sizeof(int64_t));
  }
};

// out = the elements of `in` where `mask` is true, in order; one element is
// `Bytes` bytes, copied as they are.
template <size_t Bytes>
struct RawMaskedSelectKernel {
  char* out;
  const char* in;
  const bool* mask;
  int64_t n;

  void operator()() const {
    const char* x = c10::openreg::kernel_pointer(in);
    const bool* m = c10::openreg::kernel_pointer(mask);
    char* o = c10::openreg::kernel_pointer(out);
    char block[kBlock * Bytes];
    int64_t filled = 0;
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(block + filled * Bytes, x + i * Bytes, Bytes);
      filled += m[i];
      if (filled == kBlock) {
        std::memcpy(o, block, kBlock * Bytes);
        o += kBlock * Bytes;
        filled = 0;
      }
    }
    std::memcpy(o, block, filled * Bytes);
  }
};
}  // namespace

// LITERALINCLUDE START: NONZERO_KERNEL
// The result's size is the number of nonzero elements, which only the data
// knows. A first kernel counts them and the host waits for the count (the
// synchronization CUDA's nonzero makes too); the result is then allocated on
// the device at its exact size, and a second kernel, queued without waiting,
// writes the indices straight into it. (Borrowed, the CPU kernel would write
// host memory that is then copied over: a second pass over the result.)
//
// count_on_device launches the counting kernel and waits for its result.
static int64_t count_on_device(const char* op, const at::Tensor& t) {
  refuse_while_capturing(op);
  auto count = std::make_shared<int64_t>(0);
  if (raw_scannable(t)) {
    c10::openreg::check_storage_fits(t);  // raw pointers skip KernelTensor's check
    AT_DISPATCH_ALL_TYPES_AND3(at::kBool, at::kHalf, at::kBFloat16, t.scalar_type(), "count", [&] {
      launch_kernel([x = t.const_data_ptr<scalar_t>(), n = t.numel(), count] {
        *count = count_raw(c10::openreg::kernel_pointer(x), n);
      });
    });
  } else {
    launch_kernel(
        [in = KernelTensor(t), count] { *count = at::count_nonzero(in.cpu()).item<int64_t>(); });
  }
  c10::openreg::getCurrentOpenRegStream().synchronize();
  return *count;
}

at::Tensor nonzero(const at::Tensor& self) {
  TORCH_CHECK(self.numel() < std::numeric_limits<int>::max(),
              "nonzero is not supported for "
              "tensors with more than INT_MAX elements, but got a tensor of ",
              self.numel(), " elements");
  c10::DeviceGuard guard(self.device());
  const int64_t count = count_on_device("aten::nonzero", self);
  at::Tensor out = empty_openreg({count, self.dim()}, at::kLong, self.device());
  if (out.numel() == 0) return out;
  if (raw_nonzero(self)) {
    auto dtype = self.scalar_type();
    AT_DISPATCH_ALL_TYPES_AND3(at::kBool, at::kHalf, at::kBFloat16, dtype, "nonzero", [&] {
      launch_kernel(RawNonzeroKernel<scalar_t>{
          out.mutable_data_ptr<int64_t>(), self.const_data_ptr<scalar_t>(),
          c10::SmallVector<int64_t, 6>(self.sizes().begin(), self.sizes().end())});
    });
  } else {
    launch_kernel([o = KernelTensor(out), in = KernelTensor(self)] {
      at::Tensor indices = o.cpu();  // exactly the size nonzero_out wants: it writes in place
      at::nonzero_out(indices, in.cpu());
    });
  }
  return out;
}
// LITERALINCLUDE END: NONZERO_KERNEL

// masked_select the same way: count the mask (broadcast to the common shape),
// allocate, and write the selected values in place: a raw loop when the
// tensor and the mask are contiguous and of one shape, else PyTorch's CPU
// kernel.
at::Tensor masked_select(const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  c10::Device device = common_device("masked_select", {self, mask});
  TORCH_CHECK(self.is_privateuseone() && mask.is_privateuseone(),
              "masked_select: expected "
              "both tensors on ",
              device);
  at::DimVector shape = at::infer_size_dimvector(self.sizes(), mask.sizes());
  c10::DeviceGuard guard(device);
  const int64_t count = count_on_device("aten::masked_select", mask.expand(shape));
  at::Tensor out = empty_openreg({count}, self.scalar_type(), device);
  if (count == 0) return out;
  bool raw = self.sizes() == mask.sizes() && self.is_contiguous() && mask.is_contiguous() &&
             !self.is_conj() && !self.is_neg();
  auto launch_raw = [&](auto bytes) {
    c10::openreg::check_storage_fits(self);
    launch_kernel(RawMaskedSelectKernel<decltype(bytes)::value>{
        static_cast<char*>(out.mutable_data_ptr()), static_cast<const char*>(self.const_data_ptr()),
        mask.const_data_ptr<bool>(), self.numel()});
  };
  switch (raw ? self.element_size() : 0) {
    case 1: launch_raw(std::integral_constant<size_t, 1>()); break;
    case 2: launch_raw(std::integral_constant<size_t, 2>()); break;
    case 4: launch_raw(std::integral_constant<size_t, 4>()); break;
    case 8: launch_raw(std::integral_constant<size_t, 8>()); break;
    case 16: launch_raw(std::integral_constant<size_t, 16>()); break;
    default:
      launch_kernel([o = KernelTensor(out), in = KernelTensor(self), m = KernelTensor(mask)] {
        at::Tensor values = o.cpu();  // the size masked_select_out computes: it writes in place
        at::masked_select_out(values, in.cpu(), m.cpu());
      });
  }
  return out;
}

}  // namespace at::native::openreg

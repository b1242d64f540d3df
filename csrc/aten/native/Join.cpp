// Join.cpp: cat and stack of small contiguous tensors as block copies on the device.
//
// Joining small tensors is a short job on the CPU; borrowed, the host would box
// a tensor list and plan it, and stack would go through unsqueeze views and
// cat.out, costing more than the copy itself. Joining contiguous tensors of
// one dtype along dimension d is, for each index of the dimensions before d,
// one block copy per input, so a small kernel does it. Other joins (mixed
// dtypes, strided inputs, the legacy empty 1-D tensors cat skips, large
// tensors where PyTorch's parallel copy wins) stay with PyTorch's kernel.
#include "Join.h"

#include <ATen/WrapDimUtils.h>
#include <ATen/ops/cat_ops.h>
#include <ATen/ops/stack_native.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/SmallVector.h>

#include <cstring>

#include "../../runtime/OpenRegLaunch.h"
#include "../../runtime/OpenRegStorage.h"
#include "Borrowed.h"
#include "Minimal.h"

namespace at::native::openreg {

namespace {
// out = for o in [0, outer): input 0's o-th block, input 1's o-th block, ...
// Each input's blocks are `block_bytes` long and follow each other.
struct JoinKernel {
  struct Input {
    const char* data;  // a device pointer
    int64_t block_bytes;
  };
  char* out;  // a device pointer
  c10::SmallVector<Input, 4> inputs;
  int64_t outer;

  void operator()() const {
    char* dst = c10::openreg::kernel_pointer(out);
    c10::SmallVector<const char*, 4> src;
    for (const Input& in : inputs) src.push_back(c10::openreg::kernel_pointer(in.data));
    for (int64_t o = 0; o < outer; ++o) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        const int64_t n = inputs[i].block_bytes;
        std::memcpy(dst, src[i] + o * n, n);
        dst += n;
      }
    }
  }
};

// The block copies run on one thread: past kParallelElements elements,
// PyTorch's copy, on the kernel threads, wins.
using c10::openreg::kParallelElements;

// Whether the block-copy kernel takes these inputs: one device, one dtype,
// contiguous, none empty, of one rank, sizes equal except along `dim` (or
// everywhere, for stack). Then `dim` is in range.
bool joinable(at::TensorList tensors, int64_t dim, bool same_sizes) {
  if (tensors.empty()) return false;
  const at::Tensor& first = tensors[0];
  const int64_t rank = first.dim();
  const int64_t join_rank = same_sizes ? rank + 1 : rank;  // stack adds a dimension
  if (rank == 0 && !same_sizes) return false;              // cat of 0-dim tensors: PyTorch's error
  if (dim < -join_rank || dim >= join_rank) return false;  // PyTorch's error
  const int64_t d = dim < 0 ? dim + join_rank : dim;
  int64_t numel = 0;
  for (const at::Tensor& t : tensors) {
    if (!t.is_privateuseone() || t.device() != first.device() ||
        t.scalar_type() != first.scalar_type() || t.dim() != rank || !t.is_contiguous() ||
        t.is_neg() || t.is_conj() || t.numel() == 0) {
      return false;
    }
    for (int64_t k = 0; k < rank; ++k) {
      if (t.size(k) != first.size(k) && (same_sizes || k != d)) return false;
    }
    c10::openreg::check_storage_fits(t);  // raw pointers skip KernelTensor's check
    numel += t.numel();
  }
  return numel <= kParallelElements;
}

// The joined result of tensors that passed joinable(); `d` is the wrapped
// dimension, `shape` the result's.
at::Tensor join(at::TensorList tensors, int64_t d, at::IntArrayRef shape) {
  const at::Tensor& first = tensors[0];
  c10::DeviceGuard guard(first.device());
  at::Tensor out = empty_openreg(shape, first.scalar_type(), first.device());
  int64_t outer = 1;
  for (int64_t k = 0; k < d; ++k) outer *= first.size(k);
  JoinKernel kernel{static_cast<char*>(out.mutable_data_ptr()), {}, outer};
  for (const at::Tensor& t : tensors) {
    kernel.inputs.push_back({static_cast<const char*>(t.const_data_ptr()),
                             static_cast<int64_t>(t.numel() / outer * t.element_size())});
  }
  c10::openreg::launch_kernel(std::move(kernel));
  return out;
}
}  // namespace

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  c10::SmallVector<at::Tensor, 4> list(tensors.begin(), tensors.end());
  if (!joinable(list, dim, /*same_sizes=*/false)) {
    return call_borrowed<at::_ops::cat>({std::vector<at::Tensor>(list.begin(), list.end()), dim})
        .back()
        .toTensor();
  }
  const int64_t d = c10::maybe_wrap_dim(dim, list[0].dim());
  at::DimVector shape(list[0].sizes().begin(), list[0].sizes().end());
  shape[d] = 0;
  for (const at::Tensor& t : list) shape[d] += t.size(d);
  return join(list, d, shape);
}

at::Tensor stack(at::TensorList tensors, int64_t dim) {
  if (!joinable(tensors, dim, /*same_sizes=*/true)) {
    // PyTorch's composite: unsqueezed views of the inputs, joined by cat.
    return at::native::stack(tensors, dim);
  }
  const int64_t d = c10::maybe_wrap_dim(dim, tensors[0].dim() + 1);
  at::DimVector shape(tensors[0].sizes().begin(), tensors[0].sizes().end());
  shape.insert(shape.begin() + d, static_cast<int64_t>(tensors.size()));
  return join(tensors, d, shape);
}

}  // namespace at::native::openreg

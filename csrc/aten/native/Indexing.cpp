// Indexing.cpp: x[idx], index_select, x[idx] += v and gather on the device, without PyTorch's index machinery.
#include "Indexing.h"

#include <ATen/Dispatch.h>
#include <ATen/ops/gather_ops.h>
#include <ATen/ops/index_ops.h>
#include <ATen/ops/index_put_ops.h>
#include <ATen/ops/index_select_ops.h>
#include <ATen/ops/tril_indices.h>
#include <ATen/ops/triu_indices.h>
#include <ATen/native/TensorFactories.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/WrapDimMinimal.h>
#include <c10/util/accumulate.h>

#include <algorithm>
#include <cstring>

#include "../../runtime/OpenRegLaunch.h"
#include "Borrowed.h"
#include "Minimal.h"
#include "Nonzero.h"

namespace at::native::openreg {

namespace {
using c10::openreg::launch_kernel;

// out[i] = self[idx[i]] where a "row" is a slice along the first dimension,
// `row_bytes` bytes of a contiguous tensor: one memcpy per index. `wrap`:
// negative indices count from the end (x[idx]); index_select refuses them.
// An index out of range fails the kernel, reported by the stream's next
// synchronize, as a GPU reports it.
template <typename index_t>
struct IndexRowsKernel {
  char* out;
  const char* self;
  const index_t* idx;
  int64_t count;      // indices
  int64_t rows;       // self.size(0)
  int64_t row_bytes;  // bytes of one row
  int64_t row_elems;  // elements of one row
  bool wrap;

  void operator()() const {
    char* o = c10::openreg::kernel_pointer(out);
    const char* s = c10::openreg::kernel_pointer(self);
    const index_t* ix = c10::openreg::kernel_pointer(idx);
    const int64_t grain = std::max<int64_t>(1, c10::openreg::kParallelElements / row_elems);
    c10::openreg::kernel_parallel_for(0, count, grain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        int64_t r = static_cast<int64_t>(ix[i]);
        TORCH_CHECK_INDEX(r < rows && r >= (wrap ? -rows : 0), "index ", r,
                          " is out of bounds for dimension 0 with size ", rows);
        if (r < 0) r += rows;
        std::memcpy(o + i * row_bytes, s + r * row_bytes, row_bytes);
      }
    });
  }
};
}  // namespace

// LITERALINCLUDE START: INDEX_ROWS_HOST
// Whether an index tensor is on self's openreg device: the raw kernels below
// read both through kernel pointers of one device.
static bool on_self_device(const at::Tensor& self, const at::Tensor& index) {
  return self.is_privateuseone() && index.device() == self.device();
}

// Whether self[idx] picks whole rows with IndexRowsKernel: an integer index
// tensor on the device of a contiguous tensor, both in plain memory.
static bool picks_rows(const at::Tensor& self, const at::Tensor& idx) {
  return (idx.scalar_type() == at::kLong || idx.scalar_type() == at::kInt) && self.dim() >= 1 &&
         on_self_device(self, idx) && self.is_contiguous() && idx.is_contiguous() &&
         !self.is_conj() && !self.is_neg() && !idx.is_neg();
}

// The result has idx's shape followed by a row's shape. No Meta kernel runs:
// PyTorch's for index is written in Python, and its first call imports SymPy
// (the borrowed path caches its shapes after that).
static at::Tensor index_rows(const at::Tensor& self, const at::Tensor& idx, bool wrap) {
  at::DimVector shape(idx.sizes().begin(), idx.sizes().end());
  shape.append(self.sizes().begin() + 1, self.sizes().end());
  c10::DeviceGuard guard(self.device());
  at::Tensor out = empty_openreg(shape, self.scalar_type(), self.device());
  const int64_t row_elems = c10::multiply_integers(self.sizes().slice(1));
  if (out.numel() == 0) return out;
  c10::openreg::check_storage_fits(self);
  c10::openreg::check_storage_fits(idx);
  AT_DISPATCH_INDEX_TYPES(idx.scalar_type(), "index_rows", [&] {
    launch_kernel(IndexRowsKernel<index_t>{
        static_cast<char*>(out.mutable_data_ptr()), static_cast<const char*>(self.const_data_ptr()),
        idx.const_data_ptr<index_t>(), idx.numel(), self.size(0),
        row_elems * static_cast<int64_t>(self.element_size()), row_elems, wrap});
  });
  return out;
}

// Index tensors on the CPU are copied to self's device, as CUDA's indexing
// does: x[torch.tensor([0, 2])] and x[torch.tensor([0, 2])] = v work on both.
// Reading (index) and writing (index_put_) both start here.
static c10::List<std::optional<at::Tensor>> indices_on_device(
    const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& given) {
  c10::List<std::optional<at::Tensor>> indices = given;  // a c10::List copy shares the elements
  if (!self.is_privateuseone()) return indices;
  bool copied = false;
  for (size_t i = 0; i < given.size(); ++i) {
    std::optional<at::Tensor> t = given.get(i);
    if (t.has_value() && t->defined() && t->is_cpu()) {
      if (!copied) indices = given.copy();  // the caller's list stays as it is
      copied = true;
      indices.set(i, t->to(self.device()));
    }
  }
  return indices;
}

// x[mask] with a boolean mask of x's own shape is masked_select(x, mask);
// x[idx] with one integer index tensor picks rows; every other index (several
// indices, x[:, idx], a mask over leading dimensions) is PyTorch's index
// kernel, borrowed.
at::Tensor index(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& given) {
  c10::List<std::optional<at::Tensor>> indices = indices_on_device(self, given);
  if (indices.size() == 1 && self.dim() > 0) {
    std::optional<at::Tensor> index = indices.get(0);
    if (index.has_value() && index->scalar_type() == at::kBool && index->sizes() == self.sizes() &&
        on_self_device(self, *index)) {
      return openreg::masked_select(self, *index);
    }
    if (index.has_value() && picks_rows(self, *index)) return index_rows(self, *index, true);
  }
  return call_borrowed<at::_ops::index_Tensor>({self, indices}).back().toTensor();
}

// index_select along the first dimension with a 1-D index picks rows too.
at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& idx) {
  if (self.dim() >= 1 && c10::maybe_wrap_dim(dim, self.dim()) == 0 && idx.dim() == 1 &&
      picks_rows(self, idx)) {
    return index_rows(self, idx, false);
  }
  return call_borrowed<at::_ops::index_select>({self, dim, idx}).back().toTensor();
}
// LITERALINCLUDE END: INDEX_ROWS_HOST

// x.index_put_((idx,), v, accumulate=True), the summing form of x[idx] = v,
// for a 1-D int64 idx and v of rows like x's: x[idx[i]] += v[i] for i in
// order, a row of `row` elements at a time. PyTorch's CPU kernel makes these
// sums one after the other in the same order when the tensors are small, so
// a row picked twice gets the CPU's bits. An index out of range fails the
// kernel with the CPU's message (rows before it are summed, as on the CPU).
template <typename scalar_t>
struct IndexPutAccumulateKernel {
  scalar_t* self;
  const scalar_t* values;
  const int64_t* index;
  int64_t picks;  // index.numel()
  int64_t size;   // self.size(0)
  int64_t row;    // elements of a row: the product of self's other sizes

  void operator()() const {
    scalar_t* s = c10::openreg::kernel_pointer(self);
    const scalar_t* v = c10::openreg::kernel_pointer(values);
    const int64_t* ix = c10::openreg::kernel_pointer(index);
    for (int64_t i = 0; i < picks; ++i, v += row) {
      int64_t k = ix[i];
      TORCH_CHECK_INDEX(k >= -size && k < size, "index ", k,
                        " is out of bounds for dimension 0 with size ", size);
      scalar_t* to = s + (k < 0 ? k + size : k) * row;
      for (int64_t j = 0; j < row; ++j) to[j] += v[j];
    }
  }
};

// The loop takes what PyTorch would accept without a word: float or double,
// contiguous, one device, no tensor sharing memory with self, v exactly of
// the picked rows' shape (no broadcast), fewer elements than a kernel needs
// to go parallel. Every other form is PyTorch's kernel, borrowed.
static bool sums_rows(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                      const at::Tensor& v, bool accumulate) {
  if (!accumulate || indices.size() != 1 || !self.is_privateuseone()) return false;
  std::optional<at::Tensor> index = indices.get(0);
  if (!index.has_value() || !index->defined()) return false;
  const at::Tensor& idx = *index;
  auto plain = [](const at::Tensor& t) {  // its elements in memory, one after the other
    return t.is_contiguous() && !t.is_neg() && !t.is_conj() && !t._is_zerotensor();
  };
  return plain(self) && plain(idx) && plain(v) &&
         (self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble) &&
         self.dim() >= 1 && self.size(0) > 0 && idx.scalar_type() == at::kLong && idx.dim() == 1 &&
         idx.device() == self.device() && v.device() == self.device() &&
         v.scalar_type() == self.scalar_type() && v.dim() == self.dim() &&
         v.size(0) == idx.size(0) && v.sizes().slice(1) == self.sizes().slice(1) &&
         !v.is_alias_of(self) && !idx.is_alias_of(self) &&
         v.numel() < c10::openreg::kParallelElements;
}

// x[idx] = v (and index_put_, index_put): the loop above when it sums rows;
// otherwise PyTorch's kernel, borrowed, with CPU index tensors copied over,
// and a 0-dim CPU value too, which CUDA takes as a scalar
// (x[idx] = torch.tensor(1.0)); a CPU value with dimensions is PyTorch's
// device error, as on CUDA.
at::Tensor& index_put_(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& given,
                       const at::Tensor& values, bool accumulate) {
  at::Tensor v = values;
  if (v.is_cpu() && v.dim() == 0 && self.is_privateuseone()) v = v.to(self.device());
  c10::List<std::optional<at::Tensor>> indices = indices_on_device(self, given);
  if (!sums_rows(self, indices, v, accumulate)) {
    call_borrowed<at::_ops::index_put_>({self, indices, v, accumulate});
    return self;
  }
  const at::Tensor idx = *indices.get(0);
  if (v.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  c10::openreg::check_storage_fits(self);
  c10::openreg::check_storage_fits(idx);
  c10::openreg::check_storage_fits(v);
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "index_put_accumulate", [&] {
    c10::openreg::launch_new_kernel<IndexPutAccumulateKernel<scalar_t>>(
        self.mutable_data_ptr<scalar_t>(), v.const_data_ptr<scalar_t>(),
        idx.const_data_ptr<int64_t>(), idx.numel(), self.size(0), self.numel() / self.size(0));
  });
  return self;
}

// gather(self, dim, index): out[o][j][i] = self[o][index[o][j][i]][i], where
// o runs over the dimensions before `dim` and i over those after it (both
// tensors contiguous, of one shape but along `dim`). Elements are copied as
// bytes of their size, so one loop serves every dtype. A negative index or
// one past the end fails the kernel, as PyTorch's CPU gather refuses it.
template <typename elem_t>
struct GatherKernel {
  elem_t* out;
  const elem_t* self;
  const int64_t* index;
  int64_t outer;  // product of the sizes before dim
  int64_t picks;  // index.size(dim)
  int64_t size;   // self.size(dim)
  int64_t inner;  // product of the sizes after dim
  int64_t dim;

  void operator()() const {
    elem_t* o = c10::openreg::kernel_pointer(out);
    const elem_t* s = c10::openreg::kernel_pointer(self);
    const int64_t* ix = c10::openreg::kernel_pointer(index);
    for (int64_t a = 0; a < outer; ++a) {
      const elem_t* from = s + a * size * inner;
      for (int64_t j = 0; j < picks; ++j) {
        for (int64_t b = 0; b < inner; ++b, ++ix, ++o) {
          int64_t k = *ix;
          TORCH_CHECK(k >= 0 && k < size, "index ", k, " is out of bounds for dimension ", dim,
                      " with size ", size);
          *o = from[k * inner + b];
        }
      }
    }
  }
};

template <typename elem_t>
void launch_gather(const at::Tensor& out, const at::Tensor& self, int64_t dim,
                   const at::Tensor& index) {
  c10::openreg::launch_new_kernel<GatherKernel<elem_t>>(
      static_cast<elem_t*>(out.mutable_data_ptr()),
      static_cast<const elem_t*>(self.const_data_ptr()), index.const_data_ptr<int64_t>(),
      c10::multiply_integers(self.sizes().slice(0, dim)), index.size(dim), self.size(dim),
      c10::multiply_integers(self.sizes().slice(dim + 1)), dim);
}

// The loop takes contiguous tensors on one openreg device, an int64 index of
// self's shape but along dim, fewer elements than a kernel needs to go
// parallel; everything else (and every error PyTorch raises) is PyTorch's
// kernel, borrowed.
at::Tensor gather(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool sparse_grad) {
  bool loop = !sparse_grad && self.is_privateuseone() && self.dim() > 0 &&
              index.scalar_type() == at::kLong && index.dim() == self.dim() &&
              index.device() == self.device() && self.is_contiguous() && index.is_contiguous() &&
              !self.is_neg() && !self.is_conj() && index.numel() < c10::openreg::kParallelElements;
  if (loop) {
    dim = c10::maybe_wrap_dim(dim, self.dim());
    for (int64_t d = 0; d < self.dim() && loop; ++d) {
      loop = d == dim ? self.size(d) > 0 : index.size(d) == self.size(d);
    }
  }
  int64_t bytes = self.element_size();  // complex<double> (16 bytes) stays PyTorch's
  if (!loop || (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)) {
    return call_borrowed<at::_ops::gather>({self, dim, index, sparse_grad}).back().toTensor();
  }
  c10::openreg::check_storage_fits(self);
  c10::openreg::check_storage_fits(index);
  c10::DeviceGuard guard(self.device());
  at::Tensor out = empty_openreg(index.sizes(), self.scalar_type(), self.device());
  if (out.numel() == 0) return out;
  switch (bytes) {
    case 1: launch_gather<uint8_t>(out, self, dim, index); break;
    case 2: launch_gather<uint16_t>(out, self, dim, index); break;
    case 4: launch_gather<uint32_t>(out, self, dim, index); break;
    default: launch_gather<uint64_t>(out, self, dim, index); break;
  }
  return out;
}

// LITERALINCLUDE START: INDEXING_TRIANGLE_FACTORIES
// tril_indices and triu_indices create tensors from nothing, so the CPU
// fallback cannot serve them. The host checks the arguments and computes
// the result's size with PyTorch's own helpers (ATen/native/TensorFactories.h);
// the kernel fills the device tensor with what PyTorch's CPU factory makes.
namespace {
at::Tensor triangle_indices(bool lower, int64_t row, int64_t col, int64_t offset,
                            std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                            std::optional<c10::Device> device) {
  at::native::check_args(row, col, layout);
  int64_t count = lower ? at::native::get_tril_size(row, col, offset)
                        : row * col - at::native::get_tril_size(row, col, offset - 1);
  c10::Device where = c10::device_or_default(device);
  c10::ScalarType type = dtype.value_or(at::kLong);
  at::Tensor out = empty_openreg({2, count}, type, where);
  if (count == 0) return out;
  c10::DeviceGuard guard(where);
  c10::openreg::launch_kernel(
      [result = c10::openreg::KernelTensor(out), lower, row, col, offset, type] {
        auto options = at::TensorOptions().dtype(type);
        result.cpu().copy_(lower ? at::tril_indices(row, col, offset, options)
                                 : at::triu_indices(row, col, offset, options));
      });
  return out;
}
}  // namespace

at::Tensor tril_indices(int64_t row, int64_t col, int64_t offset,
                        std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                        std::optional<c10::Device> device, std::optional<bool> /*pin_memory*/) {
  return triangle_indices(true, row, col, offset, dtype, layout, device);
}

at::Tensor triu_indices(int64_t row, int64_t col, int64_t offset,
                        std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                        std::optional<c10::Device> device, std::optional<bool> /*pin_memory*/) {
  return triangle_indices(false, row, col, offset, dtype, layout, device);
}
// LITERALINCLUDE END: INDEXING_TRIANGLE_FACTORIES

}  // namespace at::native::openreg

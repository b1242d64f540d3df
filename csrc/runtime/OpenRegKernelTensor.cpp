// OpenRegKernelTensor.cpp: a device tensor seen from inside a kernel, as a CPU tensor on the kernel's view of its storage.
#include "OpenRegLaunch.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Storage.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/SmallVector.h>
#include <c10/util/accumulate.h>

#include <utility>

namespace c10::openreg {

// LITERALINCLUDE START: LAUNCH_KERNEL_STORAGES
// Inside a kernel, every KernelTensor of one device storage gets the same
// CPU storage (the storage's kernel-view memory). PyTorch's CPU kernels
// compare storages to find tensors that share memory: an in-place operator
// whose input overlaps its output in part (x[1:].add_(x[:-1])) is refused
// with PyTorch's error, as on the CPU. With a CPU storage per tensor, the
// kernel saw no overlap and computed a cascade of wrong values.
namespace {
thread_local c10::SmallVector<std::pair<const void*, c10::Storage>, 4> kernel_storages;

c10::Storage kernel_storage(const void* device_start, size_t bytes) {
  // Storages of no memory (empty tensors) share nothing: each gets its own.
  bool shared = device_start != nullptr;
  for (const auto& [start, storage] : kernel_storages) {
    if (shared && start == device_start) return storage;
  }
  void* memory = kernel_pointer(const_cast<void*>(device_start));
  c10::Storage storage(c10::Storage::use_byte_size_t(), bytes,
                       at::DataPtr(memory, at::Device(at::kCPU)), /*allocator=*/nullptr,
                       /*resizable=*/false);
  if (shared) kernel_storages.emplace_back(device_start, storage);
  return storage;
}
}  // namespace

namespace detail {
void end_kernel_storages() { kernel_storages.clear(); }
}  // namespace detail

at::Tensor KernelTensor::cpu() const {
  kernel_works_on(c10::multiply_integers(sizes_));  // a large tensor gets the kernel threads
  at::Tensor t = at::detail::make_tensor<c10::TensorImpl>(
      kernel_storage(storage_, storage_bytes_), c10::DispatchKeySet(c10::DispatchKey::CPU),
      c10::scalarTypeToTypeMeta(dtype_));
  t.unsafeGetTensorImpl()->set_sizes_and_strides(sizes_, strides_, offset_);
  if (conj_) t._set_conj(true);
  if (neg_) t._set_neg(true);
  return t;
}
// LITERALINCLUDE END: LAUNCH_KERNEL_STORAGES

}  // namespace c10::openreg

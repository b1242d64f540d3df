// OpenRegLaunch.cpp: the in-kernel view of a device tensor, and the memory of kernel bodies.
#include "OpenRegLaunch.h"

// LITERALINCLUDE START: LAUNCH_OPENREG_LAUNCH_CPP_INCLUDES
#include <ATen/core/Tensor.h>
#include <c10/core/Storage.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/SmallVector.h>

#include <atomic>
#include <iterator>
#include <utility>
// LITERALINCLUDE END: LAUNCH_OPENREG_LAUNCH_CPP_INCLUDES

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
  at::Tensor t = at::detail::make_tensor<c10::TensorImpl>(
      kernel_storage(storage_, storage_bytes_), c10::DispatchKeySet(c10::DispatchKey::CPU),
      c10::scalarTypeToTypeMeta(dtype_));
  t.unsafeGetTensorImpl()->set_sizes_and_strides(sizes_, strides_, offset_);
  if (conj_) t._set_conj(true);
  if (neg_) t._set_neg(true);
  return t;
}
// LITERALINCLUDE END: LAUNCH_KERNEL_STORAGES

// LITERALINCLUDE START: LAUNCH_BODY_POOL
namespace detail {
namespace {
struct FreeBlock {
  FreeBlock* next;
};

// Blocks of one size given back by the workers: a lock-free stack. Workers
// push one block at a time; a launching thread takes the whole stack at once,
// so no thread ever pops a single block that another may be pushing again
// (no ABA). It takes them only once `kBatch` have come back: the stack's
// cache line then moves between the cores once per batch, not per launch.
// `count` (pushes since the last take) bounds the idle blocks at about
// `limit`; past that, workers free.
struct BodyPool {
  size_t block_bytes;
  size_t limit;
  std::atomic<FreeBlock*> returned{nullptr};
  std::atomic<size_t> count{0};
};
constexpr size_t kBatch = 16;
// A hand-written kernel's body (raw pointers, KernelTensors) fits the first;
// a borrowed operator's call (its captured arguments) the second.
// Each holds a stream's queue (the driver's 1,024 pending tasks) and more.
BodyPool pools[] = {{256, 4096}, {2048, 2048}};  // at most 1 MiB and 4 MiB idle

// Each launching thread's own blocks, taken from the pools' stacks.
struct LocalBlocks {
  FreeBlock* head[std::size(pools)] = {};
  ~LocalBlocks() {
    for (FreeBlock*& h : head) {
      while (h != nullptr) ::operator delete(std::exchange(h, h->next));
    }
  }
};
thread_local LocalBlocks local_blocks;

int pool_for(size_t bytes) {
  for (size_t i = 0; i < std::size(pools); ++i) {
    if (bytes <= pools[i].block_bytes) return static_cast<int>(i);
  }
  return -1;
}
}  // namespace

void* allocate_body(size_t bytes) {
  int p = pool_for(bytes);
  if (p < 0) return ::operator new(bytes);
  BodyPool& pool = pools[p];
  FreeBlock*& head = local_blocks.head[p];
  if (head == nullptr && pool.count.load(std::memory_order_relaxed) >= kBatch) {
    // Reset before the take: a push racing with it may be counted after it,
    // so `count` never falls below the number of blocks in the stack.
    pool.count.store(0, std::memory_order_relaxed);
    head = pool.returned.exchange(nullptr, std::memory_order_acquire);
  }
  if (head == nullptr) return ::operator new(pool.block_bytes);
  return std::exchange(head, head->next);
}

void free_body(void* memory, size_t bytes) {
  int p = pool_for(bytes);
  if (p < 0 || pools[p].count.load(std::memory_order_relaxed) >= pools[p].limit) {
    return ::operator delete(memory);
  }
  BodyPool& pool = pools[p];
  auto* block = static_cast<FreeBlock*>(memory);
  block->next = pool.returned.load(std::memory_order_relaxed);
  while (!pool.returned.compare_exchange_weak(block->next, block, std::memory_order_release,
                                              std::memory_order_relaxed)) {
  }
  pool.count.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace detail
// LITERALINCLUDE END: LAUNCH_BODY_POOL

}  // namespace c10::openreg

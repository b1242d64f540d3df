// OpenRegLaunch.cpp: the in-kernel view of a device tensor, and the memory of kernel bodies.
#include "OpenRegLaunch.h"

#include <ATen/ops/from_blob.h>

#include <atomic>
#include <iterator>
#include <utility>

namespace c10::openreg {

at::Tensor KernelTensor::cpu() const {
  at::Tensor t =
      at::from_blob(kernel_pointer(data_), sizes_, strides_, at::TensorOptions().dtype(dtype_));
  if (conj_) t._set_conj(true);
  if (neg_) t._set_neg(true);
  return t;
}

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

// OpenRegKernelBodyPool.cpp: the memory of queued kernel bodies, taken on the launching thread and given back by the stream's worker.
#include "OpenRegLaunch.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <iterator>
#include <new>
#include <utility>

namespace c10::openreg {

// LITERALINCLUDE START: LAUNCH_BODY_POOL
namespace detail {
namespace {
constexpr size_t kBatch = 16;

// Blocks go back to the launching threads sixteen at a time. The first block
// freed holds the addresses of the next fifteen, so a launching thread reads
// that one block per sixteen launches. A free-list link in every block, which
// the worker wrote last, was a cache miss on the host's side of every launch.
struct Batch {
  Batch* next;  // the next batch in the pool's stack
  size_t count;
  void* blocks[kBatch - 1];
};

// A pool's sizes are constants; its stack is written by the workers, on a
// cache line of its own (read next to the sizes, it missed at every launch).
struct PoolShape {
  size_t block_bytes;
  size_t limit;  // blocks left idle in the stack at most; past that, freed
};
// A hand-written kernel's body (raw pointers, KernelTensors) fits the first;
// a borrowed operator's call (its captured arguments) the second.
// Each holds a stream's queue (the driver's 1,024 pending tasks) and more.
constexpr PoolShape kPools[] = {{256, 4096}, {2048, 2048}};  // at most 1 MiB and 4 MiB idle
static_assert(sizeof(Batch) <= kPools[0].block_bytes, "a batch lives in a block");

// Full batches given back by the workers: a lock-free stack. A launching
// thread takes the whole stack at once, so no thread ever pops a single batch
// that another may be pushing again (no ABA). `idle` (blocks pushed since the
// last take) bounds the idle blocks.
struct alignas(64) PoolStack {
  std::atomic<Batch*> batches{nullptr};
  std::atomic<size_t> idle{0};
};
PoolStack stacks[std::size(kPools)];

constexpr int pool_for(size_t bytes) {
  for (size_t i = 0; i < std::size(kPools); ++i) {
    if (bytes <= kPools[i].block_bytes) return static_cast<int>(i);
  }
  return -1;
}

void free_batch(Batch* b) {
  for (size_t i = 0; i < b->count; ++i) ::operator delete(b->blocks[i]);
  ::operator delete(b);
}

// A thread's own blocks: on a launching thread, the addresses taken from the
// stacks; on a worker, the batch it is filling. Freed when the thread ends;
// a body released later on the same thread (a static destructor at exit
// destroying a captured graph) goes straight to the heap.
struct LocalBlocks {
  bool alive = true;
  void* ready[std::size(kPools)][kBatch] = {};
  size_t ready_count[std::size(kPools)] = {};
  Batch* taken[std::size(kPools)] = {};    // batches taken, not yet opened
  Batch* filling[std::size(kPools)] = {};  // the batch this thread is filling
  ~LocalBlocks() {
    alive = false;
    for (size_t p = 0; p < std::size(kPools); ++p) {
      for (size_t i = 0; i < ready_count[p]; ++i) ::operator delete(ready[p][i]);
      while (taken[p] != nullptr) free_batch(std::exchange(taken[p], taken[p]->next));
      if (filling[p] != nullptr) free_batch(std::exchange(filling[p], nullptr));
      ready_count[p] = 0;
    }
  }
};
thread_local LocalBlocks local_blocks;
}  // namespace

void* allocate_body(size_t bytes) {
  int p = pool_for(bytes);
  if (p < 0 || !local_blocks.alive) return ::operator new(p < 0 ? bytes : kPools[p].block_bytes);
  LocalBlocks& local = local_blocks;
  if (local.ready_count[p] > 0) return local.ready[p][--local.ready_count[p]];
  if (local.taken[p] == nullptr && stacks[p].batches.load(std::memory_order_relaxed) != nullptr) {
    // Reset before the take: a push racing with it may be counted after it,
    // so `idle` never falls below the number of blocks in the stack.
    stacks[p].idle.store(0, std::memory_order_relaxed);
    local.taken[p] = stacks[p].batches.exchange(nullptr, std::memory_order_acquire);
  }
  if (Batch* b = local.taken[p]) {  // open a batch: its addresses, then the batch's own block
    local.taken[p] = b->next;
    std::copy(b->blocks, b->blocks + b->count, local.ready[p]);
    local.ready_count[p] = b->count;
    return b;
  }
  return ::operator new(kPools[p].block_bytes);
}

void free_body(void* memory, size_t bytes) {
  int p = pool_for(bytes);
  if (p < 0 || !local_blocks.alive ||
      stacks[p].idle.load(std::memory_order_relaxed) >= kPools[p].limit) {
    return ::operator delete(memory);
  }
  Batch*& filling = local_blocks.filling[p];
  if (filling == nullptr) {
    filling = new (memory) Batch{nullptr, 0, {}};
    return;
  }
  filling->blocks[filling->count++] = memory;
  if (filling->count < kBatch - 1) return;
  Batch* full = std::exchange(filling, nullptr);
  full->next = stacks[p].batches.load(std::memory_order_relaxed);
  while (!stacks[p].batches.compare_exchange_weak(full->next, full, std::memory_order_release,
                                                  std::memory_order_relaxed)) {
  }
  stacks[p].idle.fetch_add(kBatch, std::memory_order_relaxed);
}
}  // namespace detail
// LITERALINCLUDE END: LAUNCH_BODY_POOL

}  // namespace c10::openreg

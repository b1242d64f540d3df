// OpenRegLaunch.cpp: the in-kernel view of a device tensor, and the memory of kernel bodies.
#include "OpenRegLaunch.h"

// LITERALINCLUDE START: LAUNCH_OPENREG_LAUNCH_CPP_INCLUDES
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Storage.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/SmallVector.h>
#include <c10/util/accumulate.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <new>
#include <thread>
#include <utility>

#include <omp.h>  // PyTorch's CPU kernels run their parallel loops with OpenMP (libgomp)
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

// LITERALINCLUDE START: LAUNCH_THREADS_PER_KERNEL
// A worker runs PyTorch's CPU kernels, whose parallel loops take the OpenMP
// threads of the thread that runs them: each worker that runs a parallel loop
// gets a team of its own, beside the host's. libgomp lets its idle threads spin
// (a few milliseconds) only while the process has no more OpenMP threads than
// cores; past that, every idle thread sleeps at once, and every parallel loop
// of the process, the host's too, first wakes its threads. On 2 cores, one
// worker team beside the host's made a CPU layer_norm of 32 x 32 floats take
// 26-45 us instead of 4.4, and a CPU relu of 1 M floats 186 us instead of 58.
// So kernels use one thread unless the user gives the device more (and then,
// best, takes them from the host: torch.set_num_threads).
namespace {
std::atomic<int> threads_per_kernel{1};
}  // namespace

void set_kernel_threads(int threads) {
  TORCH_CHECK_VALUE(threads >= 1, "openreg kernels need at least one thread, got ", threads);
  // More threads than cores only queue for them (and every stream's worker has its own).
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  TORCH_CHECK_VALUE(threads <= cores, "openreg kernels can use at most ", cores,
                    " threads (this machine's cores), got ", threads);
  threads_per_kernel.store(threads, std::memory_order_relaxed);
}

int kernel_threads() { return threads_per_kernel.load(std::memory_order_relaxed); }

// MKL (matrix products) keeps a per-thread count of its own, which PyTorch sets
// when torch.set_num_threads was called. MKL's C name for mkl_set_num_threads_local
// (the lower-case symbol takes its argument by pointer, for Fortran); weak, for a
// torch built without MKL.
extern "C" int MKL_Set_Num_Threads_Local(int) __attribute__((weak));

namespace {
thread_local int applied = 0;  // the count this worker thread's loops use now (0: not set yet)

void use_threads(int threads) {
  if (applied == 0) {
    // PyTorch sets a thread's count at its first parallel loop, and would undo
    // ours: run that first. Each library keeps its own "first loop" flag (the
    // flag of an inline function, not exported): libtorch_cpu's, which
    // at::get_num_threads runs, and ours, for this library's own loops.
    (void)at::get_num_threads();
    at::internal::lazy_init_num_threads();
  }
  omp_set_num_threads(threads);
  if (MKL_Set_Num_Threads_Local != nullptr) MKL_Set_Num_Threads_Local(threads);
  applied = threads;
}
}  // namespace

namespace detail {
// A small kernel's loops stay on the worker: with more than one thread,
// PyTorch splits even a softmax of 32 x 32 floats, and the team's second
// thread, woken for a few microseconds of work, then spins and takes a core
// from the host thread that launches the next kernel.
void begin_kernel_threads() {
  if (applied != 1) use_threads(1);
}
}  // namespace detail

void use_kernel_threads() {
  int wanted = threads_per_kernel.load(std::memory_order_relaxed);
  if (wanted != applied) use_threads(wanted);
}
// LITERALINCLUDE END: LAUNCH_THREADS_PER_KERNEL

}  // namespace c10::openreg

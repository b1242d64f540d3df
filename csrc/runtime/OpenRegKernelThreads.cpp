// OpenRegKernelThreads.cpp: how many threads a kernel's parallel loops use, and when a worker gives its threads back.
#include "OpenRegLaunch.h"

#include <ATen/Parallel.h>
#include <ATen/TensorIterator.h>  // at::internal::GRAIN_SIZE

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include <omp.h>  // PyTorch's CPU kernels run their parallel loops with OpenMP (libgomp)

namespace c10::openreg {

// OpenRegLaunch.h writes kParallelElements out to keep TensorIterator.h out of
// every kernel file; this one file holds it to PyTorch's value.
static_assert(kParallelElements == at::internal::GRAIN_SIZE,
              "kParallelElements must be the grain size of PyTorch's CPU loops");

// LITERALINCLUDE START: LAUNCH_THREADS_PER_KERNEL
// A worker runs PyTorch's CPU kernels, whose parallel loops take the OpenMP
// threads of the thread that runs them: each worker that runs a parallel loop
// gets a team of its own, beside the host's. Kernels take as many threads as
// PyTorch's own loops (torch.get_num_threads() when the backend loads), so an
// operator has the machine on the device as it has on the CPU.
namespace {
int machine_cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

std::atomic<int> threads_per_kernel{std::clamp(at::get_num_threads(), 1, machine_cores())};
}  // namespace

void set_kernel_threads(int threads) {
  TORCH_CHECK_VALUE(threads >= 1, "openreg kernels need at least one thread, got ", threads);
  // More threads than cores only queue for them (and every stream's worker has its own).
  int cores = machine_cores();
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
thread_local bool has_team = false;  // whether this worker has OpenMP threads of its own now

// libgomp lets its idle threads spin, waiting for the next loop, only while
// the process has no more OpenMP threads than cores; past that, every idle
// thread sleeps at once, and each parallel loop of the process, the host's
// too, first wakes its threads: a host loop of a few microseconds then takes
// several times longer. A worker's team is such a surplus beside the host's,
// so a worker gives its team back when the device idles (the driver calls
// this on the worker after kReleaseTeamAfterUs without work): the host's own
// CPU work runs at full speed between the device's bursts, and the next
// parallel kernel starts the team again (a thread creation, tens of µs).
constexpr unsigned kReleaseTeamAfterUs = 1000;

void release_team() {
  if (!has_team) return;
  omp_pause_resource_all(omp_pause_soft);  // ends this thread's team
  has_team = false;
  applied = 0;  // the next kernel sets the counts again, and marks the team again
}

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
  if (threads > 1) {
    has_team = true;  // from the next parallel loop on (a release before it does nothing)
    static std::once_flag registered;
    std::call_once(registered, [] { orSetWorkerIdleCallback(release_team, kReleaseTeamAfterUs); });
  }
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

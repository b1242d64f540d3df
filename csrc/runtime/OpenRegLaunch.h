// OpenRegLaunch.h: what a C++ kernel needs: its launch on the current stream, its tensors, its threads.
#pragma once

#include <ATen/Parallel.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/Tensor.h>
#include <c10/util/SmallVector.h>
#include <openreg.h>

#include <cstddef>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>

#include "OpenRegException.h"
#include "OpenRegStorage.h"
#include "OpenRegStream.h"

namespace c10::openreg {

// What a kernel needs to see a device tensor: its device address and layout,
// captured at launch. Inside the kernel, cpu() wraps the kernel-view address
// in a CPU tensor, so PyTorch's own CPU kernels run on device memory.
// The conjugate and negative bits travel with it.
// LITERALINCLUDE START: LAUNCH_KERNEL_TENSOR
class KernelTensor {
 public:
  explicit KernelTensor(const at::Tensor& t)
      // First of all, the tensor must still fit its storage: a kernel is
      // never handed memory the tensor no longer owns.
      : storage_((check_storage_fits(t), t.storage().data())),
        storage_bytes_(t.storage().nbytes()),
        offset_(t.storage_offset()),
        sizes_(t.sizes().begin(), t.sizes().end()),
        strides_(t.strides().begin(), t.strides().end()),
        dtype_(t.scalar_type()),
        conj_(t.is_conj()),
        neg_(t.is_neg()) {}

  at::Tensor cpu() const;  // valid only while a kernel runs

 private:
  const void* storage_;  // the device storage's start: tensors of one storage share it
  size_t storage_bytes_;
  int64_t offset_;
  c10::SmallVector<int64_t, 5> sizes_;
  c10::SmallVector<int64_t, 5> strides_;
  ScalarType dtype_;
  bool conj_;  // a conjugate or negative view: the CPU tensor carries the same
  bool neg_;   // bits, so PyTorch's CPU kernels read the values the user sees
};

// Inside a kernel: the kernel-view address of a device pointer, the same
// memory mapped read-write for the device's workers (the host's view of it
// faults). Hand-written kernels translate their raw pointers with it.
template <typename T>
T* kernel_pointer(T* device_ptr) {
  void* k = nullptr;
  OPENREG_CHECK(orGetKernelPointer(&k, device_ptr));
  return static_cast<T*>(k);
}
// LITERALINCLUDE END: LAUNCH_KERNEL_TENSOR

// LITERALINCLUDE START: LAUNCH_KERNEL_THREADS
// How many threads a large kernel's parallel loops use: 1 to the machine's
// cores, PyTorch's own count by default; other counts raise c10::ValueError.
// The device's workers are host threads: their OpenMP threads and the host's
// share the machine's cores, and OpenMP slows every parallel loop of the
// process while there are more of its threads than cores, so an idle worker
// gives its threads back (OpenRegKernelThreads.cpp).
void set_kernel_threads(int threads);
int kernel_threads();

// A kernel starts on one thread and takes the kernel threads once it works on
// kParallelElements elements or more. The value is PyTorch's grain size, the
// size below which its CPU kernels leave an elementwise loop whole because
// waking a second thread costs more than it saves on less. PyTorch declares it
// (at::internal::GRAIN_SIZE) in the heavier ATen/TensorIterator.h, so it is
// written out here, and OpenRegKernelThreads.cpp checks that the two agree.
// Inside a kernel: use_kernel_threads() gives the rest of the kernel the
// kernel threads; kernel_works_on(n) does when n is large enough, and
// KernelTensor::cpu() calls it for every tensor it wraps.
constexpr int64_t kParallelElements = 32768;
void use_kernel_threads();

inline void kernel_works_on(int64_t elements) {
  if (elements >= kParallelElements) use_kernel_threads();
}

// A hand-written kernel's parallel loop: at::parallel_for over [begin, end) in
// pieces of at least `grain`, on the kernel threads when there is more than
// one piece.
template <class F>
void kernel_parallel_for(int64_t begin, int64_t end, int64_t grain, const F& body) {
  if (end - begin > grain) use_kernel_threads();
  at::parallel_for(begin, end, grain, body);
}
// LITERALINCLUDE END: LAUNCH_KERNEL_THREADS

// LITERALINCLUDE START: LAUNCH_VECTOR_CLONES
// The backend is compiled for the baseline of its architecture: on x86-64,
// SSE2, four floats an instruction. PyTorch compiles its CPU kernels once per
// instruction set and picks AVX2 or AVX-512 when it starts. A hand-written
// loop over many elements marked OPENREG_VECTOR_CLONES is compiled for both
// and for the baseline, and the dynamic loader binds each call to the best
// clone the machine runs (an ifunc, resolved once). The clones leave out FMA
// (avx512f and avx2 do not enable it), so a clone computes the same bits as
// the baseline: only the vector width changes. Elsewhere (other compilers,
// other architectures) the mark is empty and the loop keeps one version.
#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define OPENREG_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define OPENREG_VECTOR_CLONES
#endif
// LITERALINCLUDE END: LAUNCH_VECTOR_CLONES

namespace detail {
// LITERALINCLUDE START: LAUNCH_RUN_BOXED_KERNEL
// Forgets the CPU storages that the kernel's KernelTensors made
// (OpenRegKernelTensor.cpp), and starts a kernel on one thread
// (OpenRegKernelThreads.cpp).
void end_kernel_storages();
void begin_kernel_threads();

// `boxed` is the kernel's body: in memory of its own, or the launch's copy of
// it when the body is copied at launch (copied_at_launch, below).
template <class F>
void run_boxed_kernel(void* boxed) {
  // A kernel computes values; autograd happened on the host. PyTorch runs its
  // CPU kernels below the autograd and view-tracking keys, and so do we: the
  // CPU tensors a kernel makes would otherwise take the autograd kernel of
  // every operator they reach, and each view would get autograd's metadata.
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  begin_kernel_threads();
  try {
    (*static_cast<F*>(boxed))();
  } catch (const c10::Error& e) {
    orKernelFail(e.what_without_backtrace());  // reported by the next synchronize of this stream
  } catch (const std::exception& e) {
    orKernelFail(e.what());
  }
  end_kernel_storages();
}
// LITERALINCLUDE END: LAUNCH_RUN_BOXED_KERNEL

// The memory of a queued kernel's body: taken on the launching thread, given
// back on the stream's worker once the body has run. Small bodies come from a
// pool that the workers refill (OpenRegKernelBodyPool.cpp): with glibc's
// malloc, a block allocated by one thread and freed by another makes both
// threads take the same arena lock on every launch, and they queue on it in
// the kernel: a small operator's launch then waits on the worker's free.
void* allocate_body(size_t bytes);
void free_body(void* memory, size_t bytes);

template <class F>
void release_boxed_kernel(void* boxed) {
  static_cast<F*>(boxed)->~F();
  free_body(boxed, sizeof(F));
}
}  // namespace detail

// LITERALINCLUDE START: LAUNCH_KERNEL_QUEUE
// Queues a kernel on the current stream of the current device and returns at
// once; the stream's worker runs it later, in order with the stream's work.
// launch_new_kernel<Body>(args...) builds the body from `args`; launch_kernel(body)
// moves or copies an existing one (a lambda).
// A small body of plain bytes (a few pointers and sizes, as most hand-written
// kernels have) is copied into the launch itself, as a GPU copies a kernel's
// parameters: no memory to take and give back. Any other body is built in
// memory of its own, which the driver frees when the body can never run again
// (a captured kernel runs at every replay of its graph).
template <class Body>
constexpr bool copied_at_launch =
    std::is_trivially_copyable_v<Body> && sizeof(Body) <= OR_LAUNCH_ARGS_MAX && alignof(Body) <= 8;

template <class Body, class... Args>
void launch_new_kernel(Args&&... args) {
  if constexpr (copied_at_launch<Body>) {
    const Body body{std::forward<Args>(args)...};
    orStream_t stream = getCurrentOpenRegStream().stream();
    OPENREG_CHECK(
        orLaunchKernelWithArgs(stream, &detail::run_boxed_kernel<Body>, &body, sizeof(Body)));
  } else {
    static_assert(alignof(Body) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "over-aligned kernel body");
    void* memory = detail::allocate_body(sizeof(Body));
    Body* boxed = nullptr;
    try {
      boxed = new (memory) Body{std::forward<Args>(args)...};
    } catch (...) {
      detail::free_body(memory, sizeof(Body));
      throw;
    }
    orStream_t stream = getCurrentOpenRegStream().stream();
    orError_t err = orLaunchKernelEx(stream, &detail::run_boxed_kernel<Body>, boxed,
                                     &detail::release_boxed_kernel<Body>);
    if (err != orSuccess) {
      // A failure under blocking launch ran the kernel, and the driver released it.
      if (err != orErrorLaunchFailure) detail::release_boxed_kernel<Body>(boxed);
      OPENREG_CHECK(err);
    }
  }
}

template <class F>
void launch_kernel(F&& body) {
  launch_new_kernel<std::decay_t<F>>(std::forward<F>(body));
}
// LITERALINCLUDE END: LAUNCH_KERNEL_QUEUE

}  // namespace c10::openreg

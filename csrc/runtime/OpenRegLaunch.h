// OpenRegLaunch.h: launching C++ kernels onto the current openreg stream.
#pragma once

// LITERALINCLUDE START: LAUNCH_OPENREG_LAUNCH_INCLUDES
#include <ATen/core/Tensor.h>
#include <c10/util/SmallVector.h>
#include <openreg.h>

#include <exception>
#include <type_traits>
#include <utility>

#include "OpenRegException.h"
#include "OpenRegStorage.h"
#include "OpenRegStream.h"
// LITERALINCLUDE END: LAUNCH_OPENREG_LAUNCH_INCLUDES

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
      : data_((check_storage_fits(t), const_cast<void*>(t.const_data_ptr()))),
        sizes_(t.sizes().begin(), t.sizes().end()),
        strides_(t.strides().begin(), t.strides().end()),
        dtype_(t.scalar_type()),
        conj_(t.is_conj()),
        neg_(t.is_neg()) {}

  at::Tensor cpu() const;  // valid only while a kernel runs

 private:
  void* data_;
  c10::SmallVector<int64_t, 5> sizes_;
  c10::SmallVector<int64_t, 5> strides_;
  ScalarType dtype_;
  bool conj_;  // a conjugate or negative view: the CPU tensor carries the same
  bool neg_;   // bits, so PyTorch's CPU kernels read the values the user sees
};
// LITERALINCLUDE END: LAUNCH_KERNEL_TENSOR

// LITERALINCLUDE START: LAUNCH_KERNEL_POINTER
// Inside a kernel: the kernel-view address of a device pointer, the same
// memory mapped read-write for the device's workers (the host's view of it
// faults). Hand-written kernels translate their raw pointers with it.
template <typename T>
T* kernel_pointer(T* device_ptr) {
  void* k = nullptr;
  OPENREG_CHECK(orGetKernelPointer(&k, device_ptr));
  return static_cast<T*>(k);
}
// LITERALINCLUDE END: LAUNCH_KERNEL_POINTER

namespace detail {
template <class F>
// LITERALINCLUDE START: LAUNCH_RUN_BOXED_KERNEL
void run_boxed_kernel(void* boxed) {
  try {
    (*static_cast<F*>(boxed))();
  } catch (const c10::Error& e) {
    orKernelFail(e.what_without_backtrace());  // reported by the next synchronize of this stream
  } catch (const std::exception& e) {
    orKernelFail(e.what());
  }
}
// LITERALINCLUDE END: LAUNCH_RUN_BOXED_KERNEL

template <class F>
// LITERALINCLUDE START: LAUNCH_RELEASE_BOXED_KERNEL
void release_boxed_kernel(void* boxed) {
  delete static_cast<F*>(boxed);
}
// LITERALINCLUDE END: LAUNCH_RELEASE_BOXED_KERNEL
}  // namespace detail

// LITERALINCLUDE START: LAUNCH_KERNEL_QUEUE
// Queues `body` on the current stream of the current device and returns at
// once; the stream's worker runs it later, in order with the stream's work.
// The driver frees the body when it can never run again (a captured kernel
// runs at every replay of its graph).
template <class F>
void launch_kernel(F&& body) {
  using Body = std::decay_t<F>;
  auto* boxed = new Body(std::forward<F>(body));
  orStream_t stream = getCurrentOpenRegStream().stream();
  orError_t err = orLaunchKernelEx(stream, &detail::run_boxed_kernel<Body>, boxed,
                                   &detail::release_boxed_kernel<Body>);
  if (err != orSuccess) {
    if (err != orErrorLaunchFailure) delete boxed;  // a failure under blocking launch ran it
    OPENREG_CHECK(err);
  }
}
// LITERALINCLUDE END: LAUNCH_KERNEL_QUEUE

}  // namespace c10::openreg

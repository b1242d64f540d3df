// launch.cpp: kernel and host-function launches, and the calls a running kernel makes.
#include "internal.h"

#include <string>

using namespace openreg;

extern "C" {

// LITERALINCLUDE START: DRIVER_LAUNCH_WITH_ARGS
// Every kernel launch ends here, its arguments boxed or copied: the task is
// queued, or an injected launch fault in its place (the task's arguments are
// then released: it will never run).
static orError_t queue_kernel(orStream_t s, Task t) {
  if (queue_injected_fault(s, orFaultLaunch)) {
    t.release_arguments();
  } else {
    t.activity = activity_open(s, orActivityKindKernel);
    submit(s, t);
  }
  return config().launch_blocking ? take_stream_error(s) : ok();
}

orError_t orLaunchKernelWithArgs(orStream_t stream, orKernelFn kernel, const void* args,
                                 size_t size) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (kernel == nullptr) return fail(orErrorInvalidValue, "orLaunchKernelWithArgs: kernel is NULL");
  if (size > OR_LAUNCH_ARGS_MAX) {
    return fail(orErrorInvalidValue, "orLaunchKernelWithArgs: " + std::to_string(size) +
                                         " bytes of arguments, more than OR_LAUNCH_ARGS_MAX (" +
                                         std::to_string(OR_LAUNCH_ARGS_MAX) + ")");
  }
  if (args == nullptr && size > 0)
    return fail(orErrorInvalidValue, "orLaunchKernelWithArgs: args is NULL");
  return queue_kernel(resolve_stream(stream), copied_task(kernel, args, size, TaskKind::Kernel));
}
// LITERALINCLUDE END: DRIVER_LAUNCH_WITH_ARGS

orError_t orLaunchKernel(orStream_t stream, orKernelFn kernel, void* args) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (kernel == nullptr) return fail(orErrorInvalidValue, "orLaunchKernel: kernel is NULL");
  return queue_kernel(resolve_stream(stream), boxed_task(kernel, args, TaskKind::Kernel));
}

orError_t orLaunchKernelEx(orStream_t stream, orKernelFn kernel, void* args, orHostFn release) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (kernel == nullptr) return fail(orErrorInvalidValue, "orLaunchKernelEx: kernel is NULL");
  return queue_kernel(resolve_stream(stream), boxed_task(kernel, args, TaskKind::Kernel, release));
}

orError_t orLaunchHostFunc(orStream_t stream, orHostFn fn, void* user_data) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (fn == nullptr) return fail(orErrorInvalidValue, "orLaunchHostFunc: fn is NULL");
  submit(resolve_stream(stream), boxed_task(fn, user_data, TaskKind::Host));
  return ok();
}

// LITERALINCLUDE START: DRIVER_KERNEL_POINTER
orError_t orGetKernelPointer(void** kernel_ptr, const void* dev_ptr) {
  if (kernel_ptr == nullptr)
    return fail(orErrorInvalidValue, "orGetKernelPointer: kernel_ptr is NULL");
  if (!in_kernel) {
    return fail(orErrorNotPermitted, "device memory is reachable only from inside a kernel");
  }
  if (dev_ptr == nullptr) {
    *kernel_ptr = nullptr;
    return ok();
  }
  *kernel_ptr = kernel_address(dev_ptr);
  if (*kernel_ptr == nullptr)
    return fail(orErrorInvalidDevicePointer, "kernel argument is not device memory");
  return ok();
}
// LITERALINCLUDE END: DRIVER_KERNEL_POINTER

orError_t orKernelFail(const char* message) {
  if (running_stream == nullptr) return fail(orErrorNotPermitted, "orKernelFail outside a kernel");
  std::lock_guard<std::mutex> lock(running_stream->mu);
  if (!running_stream->failed.load()) {
    running_stream->error = message != nullptr ? message : "kernel failed";
    running_stream->failed.store(true, std::memory_order_release);
  }
  return ok();
}

}  // extern "C"

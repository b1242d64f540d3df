// OpenRegExit.cpp: leaving autograd's device threads with no Python object to release.
// LITERALINCLUDE START: EXIT_SETTLE
#include "OpenRegExit.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/autograd.h>

#include "OpenRegFunctions.h"

namespace c10::openreg {

// A backward pass's gradients on an openreg device are computed by autograd's
// worker thread for that device (as for CUDA), not by the thread that called
// backward(). That worker marks the pass finished, which wakes the caller,
// and only then drops its own reference to the pass; when that reference is
// the last one, dropping it releases the pass's tensors, and those that
// Python returned (torch.autograd.grad's results) have a Python object: the
// worker takes the GIL to release it. If the program has meanwhile reached
// the end of the interpreter (a worker preempted for a few milliseconds is
// enough), taking the GIL ends the thread with pthread_exit, through a
// noexcept destructor: "terminate called without an active exception".
//
// A worker handles one pass at a time, in order, and lets go of each before it
// takes the next. So one more pass, through each device's worker, built here
// from C++ tensors no Python object ever wrapped, and waited for, leaves
// every worker holding at most this pass, which needs no GIL to release.
// The tensors are empty: no memory is allocated and no kernel runs.
void settle_autograd_threads() noexcept {
  try {
    c10::AutoGradMode grad_mode(true);
    for (DeviceIndex d = 0; d < device_count(); ++d) {
      auto options = at::TensorOptions().device(c10::DeviceType::PrivateUse1, d);
      at::Tensor x = at::empty({0}, options).requires_grad_(true);
      at::Tensor y = x * 2;  // its backward runs on device d's worker
      torch::autograd::grad({y}, {x}, {at::empty({0}, options)});
    }
  } catch (...) {
    // Whatever failed (the driver, the engine): the process is ending, and an
    // exception must not escape at exit. That device's worker may still hold
    // a pass.
  }
}

}  // namespace c10::openreg
// LITERALINCLUDE END: EXIT_SETTLE

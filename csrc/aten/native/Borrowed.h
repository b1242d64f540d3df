// Borrowed.h: device kernels borrowed from PyTorch's CPU implementations.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <string_view>

namespace at::native::openreg {

// A boxed kernel for any functional, in-place or out= operator that has a Meta
// kernel: the Meta kernel gives the outputs' shapes on the host, and a device
// kernel runs the operator's CPU implementation on the device's memory.
void borrowed_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                     torch::jit::Stack* stack);

// LITERALINCLUDE START: BORROWED_CALL_BORROWED
// The borrowed kernel called from a hand-written one, for the arguments its
// short path does not take: `args` are the operator's arguments, the result
// is what the operator returns. `Op` is PyTorch's descriptor of the operator
// (at::_ops::neg, at::_ops::index_Tensor): it names the schema.
torch::jit::Stack call_borrowed(const c10::OperatorHandle& op, torch::jit::Stack args);

template <class Op>
torch::jit::Stack call_borrowed(torch::jit::Stack args) {
  static const c10::OperatorHandle op =
      c10::Dispatcher::singleton().findSchemaOrThrow(Op::name, Op::overload_name);
  return call_borrowed(op, std::move(args));
}
// LITERALINCLUDE END: BORROWED_CALL_BORROWED

// Registers borrowed_kernel for every remaining ATen operator that has a CPU
// and a Meta kernel and nothing for openreg; returns how many (see
// OpenRegBorrowed.cpp). Called once, when torch_openreg is imported.
int borrow_remaining_operators();

// LITERALINCLUDE START: BORROWED_WRITER_TYPE
// A direct writer for a borrowed operator: inside the kernel, it fills the
// planned results (`outs`, CPU views of device memory; undefined where an
// output was not asked for) from the arguments (`args`, CPU views too), with
// PyTorch's CPU compute routine. For operators whose .out overload PyTorch
// generates as "run the functional operator, then copy the results": the
// writer saves that copy. It returns false for arguments it does not handle;
// the kernel then takes the usual path.
using Writer = bool (*)(const torch::jit::Stack& args, const torch::jit::Stack& outs);

// Installs `writer` for the operator named `op` ("name" or "name.overload").
// Called by static initializers; the borrowed kernel looks writers up when it
// first plans a call of the operator.
void set_writer(const char* op, Writer writer);
// LITERALINCLUDE END: BORROWED_WRITER_TYPE

// An operator whose outputs' shapes depend on the data waits for the device
// (nonzero, masked_select, unique): raises if the current stream is being
// captured into a graph, which cannot wait for anything.
void refuse_while_capturing(std::string_view op);

}  // namespace at::native::openreg

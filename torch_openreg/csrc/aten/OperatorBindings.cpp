// OperatorBindings.cpp: torch.openreg.fallback's counters and the fallback's refusal reasons.
#include "../Bindings.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <pybind11/stl.h>

#include <aten/native/Borrowed.h>
#include <aten/native/Fallback.h>

namespace torch_openreg {
namespace {

void bind_operators(py::module_& m) {
  m.def("_fallback_counts", translating([] { return at::native::openreg::fallback_counts(); }));
  m.def("_reset_fallback_counts",
        translating([] { at::native::openreg::reset_fallback_counts(); }));
  // Why the CPU fallback refuses an operator ("" if it does not), e.g. "aten::view".
  m.def("_why_no_fallback",
        translating<std::string, std::string>([](std::string name, std::string overload) {
          auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name.c_str(), overload.c_str());
          return at::native::openreg::why_no_fallback(op.schema());
        }));
  // Borrows the CPU kernels of the operators left without one (once; returns how many).
  m.def("_borrow_remaining_operators",
        translating([] { return at::native::openreg::borrow_remaining_operators(); }));
}

OPENREG_BINDINGS(operators, bind_operators);

}  // namespace
}  // namespace torch_openreg

// FaultBindings.cpp: torch.openreg.faults, the driver's fault injection for tests.
#include "../Bindings.h"

#include <runtime/OpenRegFaults.h>

namespace torch_openreg {
namespace {

void bind_faults(py::module_& m) {
  m.def("_inject_fault", translating<std::string, uint64_t, uint64_t>(
                             [](std::string kind, uint64_t nth, uint64_t times) {
                               c10::openreg::inject_fault(kind, nth, times);
                             }));
  m.def("_set_stream_delay",
        translating<uint64_t>([](uint64_t us) { c10::openreg::set_stream_delay(us); }));
}

OPENREG_BINDINGS(faults, bind_faults);

}  // namespace
}  // namespace torch_openreg

// FaultBindings.cpp: torch.openreg.faults, the driver's fault injection for tests.
// LITERALINCLUDE START: FAULTS_BINDINGS_INCLUDES
#include "../Bindings.h"

#include <runtime/OpenRegFaults.h>
// LITERALINCLUDE END: FAULTS_BINDINGS_INCLUDES

namespace torch_openreg {
namespace {

// LITERALINCLUDE START: FAULTS_BIND_FAULTS
void bind_faults(py::module_& m) {
  m.def("_inject_fault", translating<std::string, uint64_t, uint64_t>(
                             [](std::string kind, uint64_t nth, uint64_t times) {
                               c10::openreg::inject_fault(kind, nth, times);
                             }));
  m.def("_set_stream_delay", translating<uint64_t>([](uint64_t us) {
          c10::openreg::set_stream_delay(us);
        }));
}

OPENREG_BINDINGS(faults, bind_faults);
// LITERALINCLUDE END: FAULTS_BIND_FAULTS

}  // namespace
}  // namespace torch_openreg

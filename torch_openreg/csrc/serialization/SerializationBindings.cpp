// SerializationBindings.cpp: torch.openreg.serialization's access to the internal-format attribute.
#include "../Bindings.h"

#include <torch/csrc/utils/pybind.h>

#include <serialization/OpenRegBackendMeta.h>

namespace torch_openreg {
namespace {

void bind_serialization(py::module_& m) {
  m.def("_internal_format", translating<const at::Tensor&>([](const at::Tensor& t) {
          return c10::openreg::format_name(c10::openreg::internal_format(t));
        }));
  m.def("_set_internal_format",
        translating<const at::Tensor&, std::string>([](const at::Tensor& t, std::string name) {
          c10::openreg::set_internal_format(t, c10::openreg::parse_format(name));
        }));
}

OPENREG_BINDINGS(serialization, bind_serialization);

}  // namespace
}  // namespace torch_openreg

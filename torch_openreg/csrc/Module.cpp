// Module.cpp: torch_openreg._C, assembled from the bindings each component registers.
#include "Bindings.h"

#include <string>
#include <utility>
#include <vector>

namespace torch_openreg {

namespace {
std::vector<std::pair<std::string, BindFunction>>& registry() {
  static std::vector<std::pair<std::string, BindFunction>> functions;
  return functions;
}
}  // namespace

BindingRegistrar::BindingRegistrar(const char* component, BindFunction bind) {
  registry().emplace_back(component, bind);
}

void bind_all(py::module_& module) {
  for (const auto& [component, bind] : registry()) bind(module);
}

}  // namespace torch_openreg

// LITERALINCLUDE START: BINDINGS_INIT_MODULE
// The symbol stub.c's PyInit__C forwards to: builds the module, then lets every
// component add its functions. A C++ error becomes the ImportError's cause.
extern "C" C10_EXPORT PyObject* initModule() {
  static PyModuleDef def = {PyModuleDef_HEAD_INIT, "torch_openreg._C",
                            "Bindings of the openreg backend", -1, nullptr};
  PyObject* module = PyModule_Create(&def);
  if (module == nullptr) return nullptr;
  try {
    auto m = pybind11::reinterpret_borrow<pybind11::module_>(module);
    torch_openreg::bind_all(m);
  } catch (pybind11::error_already_set& e) {
    e.restore();
    Py_DECREF(module);
    return nullptr;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_ImportError, e.what());
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
// LITERALINCLUDE END: BINDINGS_INIT_MODULE

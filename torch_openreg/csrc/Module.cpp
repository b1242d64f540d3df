// Module.cpp: the Python bindings of torch_openreg._C, thin wrappers over libtorch_openreg.
#include <Python.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/Generator.h>

#include <runtime/OpenRegFunctions.h>
#include <runtime/OpenRegGenerator.h>
#include <runtime/OpenRegHooks.h>

namespace py = pybind11;

namespace {

// Wraps `body(Args...)`, turning C++ errors into the matching Python exceptions
// (c10::OutOfMemoryError -> torch.OutOfMemoryError, c10::Error -> RuntimeError, ...).
template <class... Args, class F>
auto translating(F body) {
  return [body](Args... args) {
    HANDLE_TH_ERRORS
    return body(args...);
    END_HANDLE_TH_ERRORS_PYBIND
  };
}

py::dict device_properties(int device) {
  auto prop = c10::openreg::get_device_properties(static_cast<c10::DeviceIndex>(device));
  py::dict d;
  d["name"] = prop.name;
  d["total_memory"] = prop.total_memory;
  d["major"] = prop.major;
  d["minor"] = prop.minor;
  d["multi_processor_count"] = prop.multi_processor_count;
  return d;
}

// LITERALINCLUDE START: BINDINGS_MODULE
void bind(py::module_& m) {
  m.def("_init", translating([] { c10::openreg::OpenRegHooksInterface().init(); }));
  m.def("_get_device_count", [] { return static_cast<int>(c10::openreg::device_count()); });
  m.def("_get_device", translating([] { return static_cast<int>(c10::openreg::current_device()); }));
  m.def("_set_device", translating<int>([](int device) {
          c10::openreg::set_device(static_cast<c10::DeviceIndex>(device));
        }));
  m.def("_exchange_device", translating<int>([](int device) {
          return static_cast<int>(c10::openreg::exchange_device(static_cast<c10::DeviceIndex>(device)));
        }));
  m.def("_synchronize", translating<int>([](int device) {
          c10::openreg::synchronize_device(static_cast<c10::DeviceIndex>(device));
        }));
  m.def("_get_device_properties", translating<int>([](int device) { return device_properties(device); }));
  m.def("_get_default_generator", translating<int>([](int device) {
          const at::Generator& gen =
              c10::openreg::default_generator(static_cast<c10::DeviceIndex>(device));
          return py::reinterpret_steal<py::object>(THPGenerator_initDefaultGenerator(gen));
        }));
}
// LITERALINCLUDE END: BINDINGS_MODULE

}  // namespace

extern "C" C10_EXPORT PyObject* initModule() {
  static PyModuleDef def = {PyModuleDef_HEAD_INIT, "torch_openreg._C",
                            "Bindings of the openreg backend", -1, nullptr};
  PyObject* module = PyModule_Create(&def);
  if (module == nullptr) return nullptr;
  try {
    auto m = py::reinterpret_borrow<py::module_>(module);
    bind(m);
  } catch (py::error_already_set& e) {
    e.restore();
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}

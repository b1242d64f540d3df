// DeviceBindings.cpp: torch.openreg's device functions: count, selection, properties, generators.
#include "../Bindings.h"

#include <torch/csrc/Generator.h>

#include <runtime/OpenRegExit.h>
#include <runtime/OpenRegFunctions.h>
#include <runtime/OpenRegGenerator.h>
#include <runtime/OpenRegHooks.h>
#include <runtime/OpenRegLaunch.h>

namespace torch_openreg {
namespace {

py::dict device_properties(int device) {
  auto prop = c10::openreg::get_device_properties(static_cast<c10::DeviceIndex>(device));
  py::dict d;
  d["name"] = prop.name;
  d["total_memory"] = prop.total_memory;
  d["major"] = prop.major;
  d["minor"] = prop.minor;
  d["multi_processor_count"] = prop.multi_processor_count;
  d["physical_id"] = prop.physical_id;
  return d;
}

// LITERALINCLUDE START: BINDINGS_DEVICE
void bind_device(py::module_& m) {
  m.def("_init", translating([] { c10::openreg::OpenRegHooksInterface().init(); }));
  m.def("_get_device_count", [] { return static_cast<int>(c10::openreg::device_count()); });
  m.def("_get_device",
        translating([] { return static_cast<int>(c10::openreg::current_device()); }));
  m.def("_set_device", translating<int>([](int device) {
          c10::openreg::set_device(static_cast<c10::DeviceIndex>(device));
        }));
  m.def("_exchange_device", translating<int>([](int device) {
          return static_cast<int>(
              c10::openreg::exchange_device(static_cast<c10::DeviceIndex>(device)));
        }));
  // Waiting for the device must not hold the GIL: other Python threads keep
  // running (and queueing work) while this one waits.
  m.def("_synchronize", translating<int>([](int device) {
          py::gil_scoped_release no_gil;
          c10::openreg::synchronize_device(static_cast<c10::DeviceIndex>(device));
        }));
  // At interpreter exit (torch.openreg registers it with atexit): the wait for
  // autograd's device threads must not hold the GIL they may need.
  m.def("_settle_autograd_threads", [] {
    py::gil_scoped_release no_gil;
    c10::openreg::settle_autograd_threads();
  });
  m.def("_set_kernel_threads",
        translating<int>([](int n) { c10::openreg::set_kernel_threads(n); }));
  m.def("_get_kernel_threads", [] { return c10::openreg::kernel_threads(); });
  m.def("_get_device_properties",
        translating<int>([](int device) { return device_properties(device); }));
  m.def("_get_default_generator", translating<int>([](int device) {
          const at::Generator& gen =
              c10::openreg::default_generator(static_cast<c10::DeviceIndex>(device));
          return py::reinterpret_steal<py::object>(THPGenerator_initDefaultGenerator(gen));
        }));
}

OPENREG_BINDINGS(device, bind_device);
// LITERALINCLUDE END: BINDINGS_DEVICE

}  // namespace
}  // namespace torch_openreg

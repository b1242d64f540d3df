// Module.cpp: the Python bindings of torch_openreg._C, thin wrappers over libtorch_openreg.
#include <Python.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/Generator.h>

#include <aten/native/Fallback.h>
#include <runtime/OpenRegDeviceAllocator.h>
#include <runtime/OpenRegException.h>
#include <runtime/OpenRegFunctions.h>
#include <runtime/OpenRegHostAllocator.h>
#include <runtime/OpenRegStream.h>
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
  d["physical_id"] = prop.physical_id;
  return d;
}

py::dict stat_dict(const c10::CachingAllocator::Stat& s) {
  py::dict d;
  d["current"] = s.current;
  d["peak"] = s.peak;
  d["allocated"] = s.allocated;
  d["freed"] = s.freed;
  return d;
}

// The allocator's state in the format of torch.cuda.memory._snapshot(), which
// PyTorch's memory visualizer (torch.cuda._memory_viz) reads.
py::dict memory_snapshot() {
  auto snap = c10::openreg::device_allocator()->snapshot();
  py::list segments;
  for (const auto& seg : snap.segments) {
    py::list blocks;
    for (const auto& b : seg.blocks) {
      py::dict block;
      block["address"] = b.address;
      block["size"] = b.size;
      block["requested_size"] = b.requested_size;
      block["state"] = b.state;
      block["frames"] = py::list();
      blocks.append(block);
    }
    py::dict d;
    d["device"] = static_cast<int>(seg.device);
    d["address"] = seg.address;
    d["total_size"] = seg.total_size;
    d["allocated_size"] = seg.allocated_size;
    d["active_size"] = seg.active_size;
    d["requested_size"] = seg.requested_size;
    d["stream"] = seg.stream;
    d["segment_type"] = seg.is_large ? "large" : "small";
    d["segment_pool_id"] = py::make_tuple(0, 0);
    d["is_expandable"] = false;
    d["frames"] = py::list();
    d["blocks"] = blocks;
    segments.append(d);
  }
  py::list traces;
  for (const auto& device_trace : snap.device_traces) {
    py::list entries;
    for (const auto& e : device_trace) {
      py::dict entry;
      entry["action"] = e.action;
      entry["addr"] = e.address;
      entry["size"] = e.size;
      entry["stream"] = e.stream;
      entry["time_us"] = e.time_us;
      entry["frames"] = py::list();
      entries.append(entry);
    }
    traces.append(entries);
  }
  py::dict result;
  result["segments"] = segments;
  result["device_traces"] = traces;
  return result;
}

py::dict host_memory_stats() {
  at::HostStats stats = c10::openreg::host_allocator()->get_stats();
  py::dict d;
  d["active_requests"] = stat_dict(stats.active_requests);
  d["active_bytes"] = stat_dict(stats.active_bytes);
  d["allocations"] = stat_dict(stats.allocations);
  d["allocated_bytes"] = stat_dict(stats.allocated_bytes);
  d["num_host_alloc"] = stats.num_host_alloc;
  d["num_host_free"] = stats.num_host_free;
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

void bind_memory_and_streams(py::module_& m) {
  auto* allocator = c10::openreg::device_allocator();
  m.def("_memory_snapshot", translating([] { return memory_snapshot(); }));
  m.def("_record_memory_history", translating<bool, size_t>([allocator](bool on, size_t max) {
          allocator->recordHistory(on, max);
        }));
  m.def("_set_memory_fraction", translating<double, int>([allocator](double f, int device) {
          allocator->setMemoryFraction(f, static_cast<c10::DeviceIndex>(device));
        }));
  m.def("_get_memory_fraction", translating<int>([allocator](int device) {
          return allocator->getMemoryFraction(static_cast<c10::DeviceIndex>(device));
        }));
  m.def("_host_memory_stats", translating([] { return host_memory_stats(); }));
  m.def("_host_reset_peak_stats", translating([] { c10::openreg::host_allocator()->reset_peak_stats(); }));
  // torch.Event.elapsed_time rejects subclasses of torch.Event as its argument,
  // so torch.openreg.Event measures through the raw handles (Event.event_id).
  m.def("_event_elapsed_time", translating<uintptr_t, uintptr_t>([](uintptr_t start, uintptr_t end) {
          TORCH_CHECK(start != 0 && end != 0,
                      "both events must be recorded before asking for the elapsed time");
          float ms = 0;
          OPENREG_CHECK(orEventElapsedTime(&ms, reinterpret_cast<orEvent_t>(start),
                                           reinterpret_cast<orEvent_t>(end)));
          return static_cast<double>(ms);
        }));
  m.def("_stream_priority", translating<int64_t, int>([](int64_t id, int device) {
          c10::Stream s(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, device), id);
          return c10::openreg::OpenRegStream(s).priority();
        }));
  // (stream id, device index) of a driver stream created outside PyTorch.
  m.def("_stream_from_external", translating<uintptr_t, int>([](uintptr_t handle, int device) {
          auto s = c10::openreg::getStreamFromExternal(reinterpret_cast<orStream_t>(handle),
                                                       static_cast<c10::DeviceIndex>(device));
          return py::make_tuple(s.id(), static_cast<int>(s.device_index()));
        }));
}

void bind_operators(py::module_& m) {
  m.def("_fallback_counts", translating([] { return at::native::openreg::fallback_counts(); }));
  m.def("_reset_fallback_counts", translating([] { at::native::openreg::reset_fallback_counts(); }));
  // Why the CPU fallback refuses an operator ("" if it does not), e.g. "aten::view".
  m.def("_why_no_fallback", translating<std::string, std::string>([](std::string name,
                                                                     std::string overload) {
          auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name.c_str(), overload.c_str());
          return at::native::openreg::why_no_fallback(op.schema());
        }));
}

}  // namespace

extern "C" C10_EXPORT PyObject* initModule() {
  static PyModuleDef def = {PyModuleDef_HEAD_INIT, "torch_openreg._C",
                            "Bindings of the openreg backend", -1, nullptr};
  PyObject* module = PyModule_Create(&def);
  if (module == nullptr) return nullptr;
  try {
    auto m = py::reinterpret_borrow<py::module_>(module);
    bind(m);
    bind_memory_and_streams(m);
    bind_operators(m);
  } catch (py::error_already_set& e) {
    e.restore();
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}

// StreamBindings.cpp: what torch.openreg.Stream and Event need beyond torch.Stream and torch.Event.
#include "../Bindings.h"

#include <runtime/OpenRegStream.h>

namespace torch_openreg {
namespace {

void bind_streams(py::module_& m) {
  // torch.Event.elapsed_time rejects subclasses of torch.Event as its argument,
  // so torch.openreg.Event measures through the raw handles (Event.event_id).
  m.def("_event_elapsed_time",
        translating<uintptr_t, uintptr_t>([](uintptr_t start, uintptr_t end) {
          return c10::openreg::event_elapsed_time(reinterpret_cast<void*>(start),
                                                  reinterpret_cast<void*>(end));
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

OPENREG_BINDINGS(streams, bind_streams);

}  // namespace
}  // namespace torch_openreg

// DistributedBindings.cpp: the constructor of the orccl c10d backend, for torch.openreg.distributed.
#include "../Bindings.h"

#include <torch/csrc/utils/pybind.h>

#include <distributed/OpenRegBackend.h>

namespace torch_openreg {
namespace {

// LITERALINCLUDE START: DISTRIBUTED_BINDING
void bind_distributed(py::module_& m) {
  // The Python class of the backend, a torch.distributed Backend: its `options`
  // (torch.openreg.distributed) copy the transport's for split_group.
  py::class_<c10::openreg::OpenRegBackend, c10d::Backend,
             c10::intrusive_ptr<c10::openreg::OpenRegBackend>>(m, "_OrcclBackend")
      .def_property_readonly("_transport_options",
                             &c10::openreg::OpenRegBackend::getBackendOptions);
  // `transport` is a torch.distributed Backend object (a ProcessGroupGloo); the
  // result is a torch.distributed Backend that ProcessGroup._register_backend takes.
  m.def("_distributed_create_backend",
        translating<c10d::Backend*, int, int>([](c10d::Backend* transport, int rank, int size) {
          TORCH_CHECK(transport != nullptr, "the transport backend is None");
          auto owned = c10::intrusive_ptr<c10d::Backend>::unsafe_reclaim_from_nonowning(transport);
          return c10::intrusive_ptr<c10d::Backend>(
              c10::make_intrusive<c10::openreg::OpenRegBackend>(std::move(owned), rank, size));
        }));
}

OPENREG_BINDINGS(distributed, bind_distributed);
// LITERALINCLUDE END: DISTRIBUTED_BINDING

}  // namespace
}  // namespace torch_openreg

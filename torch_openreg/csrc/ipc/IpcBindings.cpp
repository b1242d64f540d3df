// IpcBindings.cpp: torch.openreg.sharing's calls into the IPC runtime (share, open, release, collect).
#include "../Bindings.h"

#include <ATen/ops/empty.h>
#include <torch/csrc/utils/pybind.h>

#include <ipc/OpenRegIpc.h>

namespace torch_openreg {
namespace {

using c10::openreg::SharedStorageHandle;

py::tuple share_storage(const at::Tensor& tensor) {
  SharedStorageHandle h = c10::openreg::share_storage(tensor.storage());
  return py::make_tuple(h.physical_device, h.memory_fd, h.offset, h.nbytes, h.control_fd, h.marker);
}

// The received storage, returned as a flat uint8 tensor over it.
at::Tensor open_shared_storage(int physical_device, int memory_fd, size_t offset, size_t nbytes,
                               int control_fd, uint64_t marker) {
  SharedStorageHandle h{physical_device, memory_fd, offset, nbytes, control_fd, marker};
  c10::Storage storage = c10::openreg::open_shared_storage(h, memory_fd, control_fd);
  at::Tensor bytes = at::empty({0}, at::TensorOptions().dtype(at::kByte).device(storage.device()));
  bytes.set_(std::move(storage));
  return bytes;
}

void bind_ipc(py::module_& m) {
  m.def("_share_openreg_storage", translating<const at::Tensor&>(share_storage));
  m.def("_open_shared_openreg_storage",
        translating<int, int, size_t, size_t, int, uint64_t>(open_shared_storage));
  m.def("_release_shared_openreg_reference",
        translating<int, size_t, size_t, int, uint64_t>(
            [](int physical_device, size_t offset, size_t nbytes, int control_fd, uint64_t marker) {
              SharedStorageHandle h{physical_device, -1, offset, nbytes, control_fd, marker};
              c10::openreg::release_shared_reference(h, control_fd);
            }));
  m.def("_ipc_collect", translating([] { return c10::openreg::ipc_collect(); }));
}

OPENREG_BINDINGS(ipc, bind_ipc);

}  // namespace
}  // namespace torch_openreg

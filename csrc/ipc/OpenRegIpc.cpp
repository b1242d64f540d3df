// OpenRegIpc.cpp: the exporter keeps shared memory alive until receivers release it; receivers map it.
#include "OpenRegIpc.h"

#include <c10/core/DeviceGuard.h>
#include <c10/core/StorageImpl.h>

#include <memory>
#include <mutex>
#include <vector>

#include "../runtime/OpenRegDeviceAllocator.h"
#include "../runtime/OpenRegException.h"
#include "../runtime/OpenRegFunctions.h"
#include "../runtime/OpenRegStream.h"

namespace c10::openreg {

namespace {
// LITERALINCLUDE START: IPC_SENT_BLOCK
// The exporter's side of a shared storage. Sharing swaps the storage's DataPtr
// for one owning a SentBlock: when this process drops the storage, the original
// memory waits in the limbo until no receiver holds a reference.
struct SentBlock {
  c10::DataPtr original;  // the caching allocator's block
  orIpcControl_t control = nullptr;
  int control_fd = -1;  // owned by the control block

  ~SentBlock() { orIpcControlDestroy(control); }
  int64_t references() const {
    int64_t count = 0;
    OPENREG_CHECK(orIpcControlAddRef(control, 0, &count));
    return count;
  }
};

class Limbo {
 public:
  void add(SentBlock* block) {
    std::lock_guard<std::mutex> lock(mu_);
    blocks_.emplace_back(block);
    collect_locked();
  }
  size_t collect() {
    std::lock_guard<std::mutex> lock(mu_);
    return collect_locked();
  }

 private:
  size_t collect_locked() {
    std::erase_if(blocks_,
                  [](const std::unique_ptr<SentBlock>& b) { return b->references() <= 0; });
    return blocks_.size();
  }
  std::mutex mu_;
  std::vector<std::unique_ptr<SentBlock>> blocks_;
};

Limbo& limbo() {
  static auto* l = new Limbo();  // leaked: receivers may outlive static destructors
  return *l;
}

void delete_sent_block(void* context) { limbo().add(static_cast<SentBlock*>(context)); }
const DataPtr* sent_block_memory(void* context) {
  return &static_cast<SentBlock*>(context)->original;
}
// LITERALINCLUDE END: IPC_SENT_BLOCK

// LITERALINCLUDE START: IPC_RECEIVED_BLOCK
// The receiver's side: the mapping and the reference it holds.
struct ReceivedBlock {
  void* ptr = nullptr;
  orIpcControl_t control = nullptr;
};

void delete_received_block(void* context) {
  std::unique_ptr<ReceivedBlock> block(static_cast<ReceivedBlock*>(context));
  // Waits for this process's work on the memory, then unmaps it; only then
  // may the exporter reuse it.
  orIpcCloseMemHandle(block->ptr);
  orIpcControlAddRef(block->control, -1, nullptr);
  orIpcControlDestroy(block->control);
}

// Tensor.record_stream on a shared storage: the allocator finds the sender's
// block inside its wrapper, and skips received memory (see above).
const bool deleters_known = [] {
  set_shared_memory_deleters({&delete_sent_block, &sent_block_memory, &delete_received_block});
  return true;
}();
// LITERALINCLUDE END: IPC_RECEIVED_BLOCK

DeviceIndex local_device(int physical_device) {
  for (DeviceIndex i = 0; i < device_count(); ++i) {
    orDeviceProp prop;
    OPENREG_CHECK(orGetDeviceProperties(&prop, i));
    if (prop.pciBusID == physical_device) return i;
  }
  TORCH_CHECK(false, "the shared tensor lives on physical openreg device ", physical_device,
              ", which is not visible in this process (OPENREG_VISIBLE_DEVICES)");
}
}  // namespace

// LITERALINCLUDE START: IPC_SHARE_STORAGE
SharedStorageHandle share_storage(const c10::Storage& storage) {
  StorageImpl* impl = storage.unsafeGetStorageImpl();
  TORCH_CHECK(impl->device_type() == DeviceType::PrivateUse1,
              "share_storage: expected an openreg storage, got one on ", impl->device());
  TORCH_CHECK(impl->nbytes() > 0, "share_storage: an empty storage has no memory to share");
  c10::DeviceGuard guard(impl->device());
  limbo().collect();
  auto* block = static_cast<SentBlock*>(impl->data_ptr().get_context());
  if (impl->data_ptr().get_deleter() != &delete_sent_block) {
    auto fresh = std::make_unique<SentBlock>();
    OPENREG_CHECK(orIpcControlCreate(&fresh->control, &fresh->control_fd));
    c10::DataPtr wrapped(impl->mutable_data(), fresh.get(), &delete_sent_block, impl->device());
    fresh->original = impl->set_data_ptr(std::move(wrapped));
    block = fresh.release();
  }
  orIpcMemHandle_t mem;
  OPENREG_CHECK(orIpcGetMemHandle(&mem, impl->mutable_data(), impl->nbytes()));
  SharedStorageHandle handle{mem.device, mem.fd, mem.offset, mem.size, block->control_fd, 0};
  // The event that travels with the handle: what is queued so far on the
  // device must finish before the receiver's stream may touch the memory.
  // Every stream counts: pickling runs in a queue's feeder thread, whose
  // current stream is not the one the user's work went to.
  OPENREG_CHECK(orIpcControlRecord(block->control, impl->device().index(), &handle.marker));
  OPENREG_CHECK(orIpcControlAddRef(block->control, 1, nullptr));
  return handle;
}
// LITERALINCLUDE END: IPC_SHARE_STORAGE

// LITERALINCLUDE START: IPC_OPEN_STORAGE
c10::Storage open_shared_storage(const SharedStorageHandle& handle, int memory_fd, int control_fd) {
  DeviceIndex device = local_device(handle.physical_device);
  c10::DeviceGuard guard(Device(DeviceType::PrivateUse1, device));
  auto block = std::make_unique<ReceivedBlock>();
  OPENREG_CHECK(orIpcControlOpen(&block->control, control_fd));
  orIpcMemHandle_t mem{handle.physical_device, memory_fd, handle.offset, handle.nbytes};
  if (orError_t err = orIpcOpenMemHandle(&block->ptr, &mem, memory_fd)) {
    orIpcControlDestroy(block->control);
    throw_driver_error(err);
  }
  OPENREG_CHECK(orIpcStreamWaitControl(getCurrentOpenRegStream(device).stream(), block->control,
                                       handle.marker));
  void* ptr = block->ptr;
  c10::DataPtr data(ptr, block.release(), &delete_received_block,
                    Device(DeviceType::PrivateUse1, device));
  return c10::Storage(c10::Storage::use_byte_size_t(), handle.nbytes, std::move(data),
                      /*allocator=*/nullptr, /*resizable=*/false);
}
// LITERALINCLUDE END: IPC_OPEN_STORAGE

// A storage this process has already opened is not mapped twice: the
// reference the sender counted for the new message is handed back at once
// (the mapping already open holds its own). The current stream still waits
// for this message's marker, so work queued after the rebuild sees what the
// sender wrote before sending.
void release_shared_reference(const SharedStorageHandle& handle, int control_fd) {
  DeviceIndex device = local_device(handle.physical_device);
  orIpcControl_t control = nullptr;
  OPENREG_CHECK(orIpcControlOpen(&control, control_fd));
  orIpcStreamWaitControl(getCurrentOpenRegStream(device).stream(), control, handle.marker);
  orIpcControlAddRef(control, -1, nullptr);
  orIpcControlDestroy(control);
}

size_t ipc_collect() { return limbo().collect(); }

}  // namespace c10::openreg

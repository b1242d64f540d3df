// OpenRegIpc.h: sharing openreg storages with other processes, like CUDA IPC.
#pragma once

#include <c10/core/Storage.h>

#include <cstdint>

namespace c10::openreg {

// What a receiving process needs to map a shared storage. The descriptors are
// the exporter's; multiprocessing duplicates them into the receiver.
struct SharedStorageHandle {
  int physical_device;  // the device, named the same way in every process
  int memory_fd;        // the device memory (a memfd)
  size_t offset;        // the storage's bytes in that memory
  size_t nbytes;
  int control_fd;   // the control block: event marker and references
  uint64_t marker;  // completes when the exporter's queued work on the storage is done
};

// Exporter: the handle for `storage`, taking one reference for the receiver.
// The storage's memory is not reused by this process until every receiver
// has released it (see ipc_collect).
SharedStorageHandle share_storage(const c10::Storage& storage);

// Receiver: maps the storage behind a handle; memory_fd and control_fd are this
// process's descriptors (the caller closes them). The current stream of the
// device waits for the exporter's marker.
c10::Storage open_shared_storage(const SharedStorageHandle& handle, int memory_fd, int control_fd);

// Receiver: a handle for a storage already open here; gives its reference
// back at once (after ordering the current stream after its marker).
void release_shared_reference(const SharedStorageHandle& handle, int control_fd);

// Exporter: frees shared storages that this process dropped and every
// receiver has released. Returns how many are still held by receivers.
size_t ipc_collect();

}  // namespace c10::openreg

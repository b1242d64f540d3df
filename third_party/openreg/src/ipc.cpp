// ipc.cpp: device memory shared between processes, with a control block for events and references.
#include "internal.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <memory>
#include <shared_mutex>

namespace openreg {

namespace {
constexpr size_t kPage = 4096;

// LITERALINCLUDE START: DRIVER_IPC_IMPORT_TABLE
// A window of another process's device memory, mapped like local memory:
// a PROT_NONE device view and a read-write kernel view of the same pages.
struct Import {
  char* device_view = nullptr;  // page-aligned start of the device view
  char* kernel_view = nullptr;
  size_t mapped = 0;      // bytes mapped (whole pages)
  char* begin = nullptr;  // the range handed out: [begin, begin + size)
  size_t size = 0;
  int device = -1;  // local index of the device
};

std::shared_mutex imports_mu;
std::map<uintptr_t, Import>* imports = new std::map<uintptr_t, Import>();  // by device_view

// The import whose mapped window holds p; the caller holds imports_mu.
const Import* find_import(const void* p) {
  auto addr = reinterpret_cast<uintptr_t>(p);
  auto it = imports->upper_bound(addr);
  if (it == imports->begin()) return nullptr;
  --it;
  if (addr >= it->first + it->second.mapped) return nullptr;
  return &it->second;
}
// LITERALINCLUDE END: DRIVER_IPC_IMPORT_TABLE

// LITERALINCLUDE START: DRIVER_IPC_CONTROL_PAGE
// The control block's shared page. `completed` is a futex word: the exporter's
// stream stores each marker once the work before it is done and wakes waiters.
struct ControlPage {
  std::atomic<uint32_t> completed;
  std::atomic<int64_t> references;  // importers' references not yet released
  int32_t exporter_pid;
};
static_assert(sizeof(ControlPage) <= kPage, "the control block is one page");
// LITERALINCLUDE END: DRIVER_IPC_CONTROL_PAGE

long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

int local_index_of_physical(int physical) {
  const Config& c = config();
  for (int i = 0; i < c.device_count; ++i) {
    if (c.physical[i] == physical) return i;
  }
  return -1;
}
}  // namespace

int imported_device_of(const void* p) {
  std::shared_lock<std::shared_mutex> lock(imports_mu);
  const Import* imp = find_import(p);
  return imp != nullptr ? imp->device : -1;
}

char* imported_to_kernel(const void* p) {
  std::shared_lock<std::shared_mutex> lock(imports_mu);
  const Import* imp = find_import(p);
  if (imp == nullptr) return nullptr;
  return imp->kernel_view + (static_cast<const char*>(p) - imp->device_view);
}

orError_t check_imported_range(const void* p, size_t count, const char* what) {
  std::shared_lock<std::shared_mutex> lock(imports_mu);
  const Import* imp = find_import(p);
  auto c = static_cast<const char*>(p);
  if (imp == nullptr || c < imp->begin) {
    return fail(orErrorInvalidDevicePointer,
                std::string(what) + " is not inside a live allocation");
  }
  if (c + count > imp->begin + imp->size) {
    return fail(orErrorInvalidValue,
                std::string(what) + " range runs past the end of its allocation");
  }
  return ok();
}

}  // namespace openreg

namespace openreg {
// The mapped page; a pending wait keeps it alive after its block is destroyed.
struct ControlMapping {
  ControlPage* page = nullptr;
  int exporter_pidfd = -1;  // importer: becomes readable when the exporter exits
  ~ControlMapping() {
    if (page != nullptr) munmap(page, kPage);
    if (exporter_pidfd >= 0) close(exporter_pidfd);
  }
};
}  // namespace openreg

struct orIpcControl_st {
  std::shared_ptr<openreg::ControlMapping> mapping;
  openreg::ControlPage* page = nullptr;
  int fd = -1;  // the exporter's own descriptor; -1 in an importer
  std::atomic<uint32_t> next_marker{0};
};

using namespace openreg;

namespace {
// LITERALINCLUDE START: DRIVER_IPC_MARKER_TASKS
// One marker is published once every stream of the device has reached it:
// each stream gets an arrival task, and the last arrival publishes.
struct PendingMarker {
  std::shared_ptr<ControlMapping> control;
  uint32_t marker;
  std::atomic<int> remaining{1};  // the recording thread holds one until all are queued
};
struct Arrival {
  std::shared_ptr<PendingMarker> pending;
};
void arrive(PendingMarker& p) {
  if (p.remaining.fetch_sub(1) != 1) return;
  std::atomic<uint32_t>& done = p.control->page->completed;
  uint32_t seen = done.load();
  while (seen < p.marker && !done.compare_exchange_weak(seen, p.marker)) {
  }
  futex(&done, FUTEX_WAKE, INT_MAX, nullptr);
}
void run_arrival(void* p) { arrive(*static_cast<Arrival*>(p)->pending); }

struct WaitArgs {
  std::shared_ptr<ControlMapping> control;
  uint32_t marker;
};
bool exporter_exited(const ControlMapping& c) {
  pollfd pfd{c.exporter_pidfd, POLLIN, 0};
  return c.exporter_pidfd < 0 || poll(&pfd, 1, 0) > 0;
}
// Runs on the importer's stream: blocks it until the exporter's marker is done,
// and fails the stream (never hangs) if the exporter exits first.
void wait_marker(void* p) {
  auto* a = static_cast<WaitArgs*>(p);
  std::atomic<uint32_t>& done = a->control->page->completed;
  const timespec slice{0, 20 * 1000 * 1000};
  for (;;) {
    uint32_t seen = done.load();
    if (seen >= a->marker) return;
    if (exporter_exited(*a->control) && done.load() < a->marker) {
      std::string msg = "the process that shared this memory (pid " +
                        std::to_string(a->control->page->exporter_pid) +
                        ") exited before its work on the memory completed";
      orKernelFail(msg.c_str());
      return;
    }
    futex(&done, FUTEX_WAIT, seen, &slice);
  }
}
// LITERALINCLUDE END: DRIVER_IPC_MARKER_TASKS

template <class T>
void release(void* p) {
  delete static_cast<T*>(p);
}

orError_t map_control(orIpcControl_t* control, int fd, bool exporter) {
  void* page = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (page == MAP_FAILED) {
    return fail(orErrorInvalidResourceHandle,
                std::string("cannot map the IPC control block: ") + std::strerror(errno));
  }
  auto* c = new orIpcControl_st();
  c->mapping = std::make_shared<ControlMapping>();
  c->mapping->page = c->page = static_cast<ControlPage*>(page);
  if (exporter) {
    c->fd = fd;
    c->page->exporter_pid = getpid();
  } else {
    c->mapping->exporter_pidfd =
        static_cast<int>(syscall(SYS_pidfd_open, c->page->exporter_pid, 0));
  }
  *control = c;
  return ok();
}
}  // namespace

extern "C" {

// LITERALINCLUDE START: DRIVER_IPC_EXPORT
orError_t orIpcGetMemHandle(orIpcMemHandle_t* handle, void* dev_ptr, size_t size) {
  if (handle == nullptr) return fail(orErrorInvalidValue, "orIpcGetMemHandle: handle is NULL");
  if (imported_device_of(dev_ptr) >= 0) {
    return fail(orErrorNotPermitted,
                "memory imported from another process cannot be exported again; "
                "copy it into memory of this process first");
  }
  if (orError_t err = check_device_range(dev_ptr, size, "orIpcGetMemHandle: pointer")) return err;
  int device = device_of(dev_ptr);
  DeviceMemory& m = device_memory(device);
  handle->device = config().physical[device];
  handle->fd = m.fd;
  handle->offset = static_cast<size_t>(static_cast<char*>(dev_ptr) - m.device_base);
  handle->size = size;
  return ok();
}
// LITERALINCLUDE END: DRIVER_IPC_EXPORT

// LITERALINCLUDE START: DRIVER_IPC_OPEN
orError_t orIpcOpenMemHandle(void** dev_ptr, const orIpcMemHandle_t* handle, int fd) {
  if (dev_ptr == nullptr || handle == nullptr) {
    return fail(orErrorInvalidValue, "orIpcOpenMemHandle: NULL argument");
  }
  *dev_ptr = nullptr;
  int device = local_index_of_physical(handle->device);
  if (device < 0) {
    return fail(orErrorInvalidDevice,
                "the shared memory lives on physical openreg device " +
                    std::to_string(handle->device) +
                    ", which is not visible in this process (see OPENREG_VISIBLE_DEVICES)");
  }
  size_t first = handle->offset & ~(kPage - 1);
  size_t mapped = (handle->offset + handle->size - first + kPage - 1) & ~(kPage - 1);
  auto at = static_cast<off_t>(first);
  void* dev = mmap(nullptr, mapped, PROT_NONE, MAP_SHARED | MAP_NORESERVE, fd, at);
  void* ker = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, at);
  if (dev == MAP_FAILED || ker == MAP_FAILED) {
    std::string why = std::strerror(errno);
    if (dev != MAP_FAILED) munmap(dev, mapped);
    if (ker != MAP_FAILED) munmap(ker, mapped);
    return fail(orErrorInvalidResourceHandle, "cannot map the shared device memory: " + why);
  }
  Import imp;
  imp.device_view = static_cast<char*>(dev);
  imp.kernel_view = static_cast<char*>(ker);
  imp.mapped = mapped;
  imp.begin = imp.device_view + (handle->offset - first);
  imp.size = handle->size;
  imp.device = device;
  std::unique_lock<std::shared_mutex> lock(imports_mu);
  (*imports)[reinterpret_cast<uintptr_t>(dev)] = imp;
  *dev_ptr = imp.begin;
  return ok();
}
// LITERALINCLUDE END: DRIVER_IPC_OPEN

orError_t orIpcCloseMemHandle(void* dev_ptr) {
  OR_REFUSE_IN_FORKED_CHILD();
  int device = imported_device_of(dev_ptr);
  if (device < 0) {
    return fail(orErrorInvalidDevicePointer,
                "orIpcCloseMemHandle: pointer was not opened from a handle");
  }
  // Like orFree: no queued work of this process may still use the pages.
  if (orError_t err = synchronize_device(device)) return err;
  Import imp;
  {
    std::unique_lock<std::shared_mutex> lock(imports_mu);
    const Import* found = find_import(dev_ptr);
    if (found == nullptr || found->begin != dev_ptr) {
      return fail(orErrorInvalidDevicePointer,
                  "orIpcCloseMemHandle: pointer is not the start of an import");
    }
    imp = *found;
    imports->erase(reinterpret_cast<uintptr_t>(imp.device_view));
  }
  munmap(imp.device_view, imp.mapped);
  munmap(imp.kernel_view, imp.mapped);
  return ok();
}

orError_t orIpcControlCreate(orIpcControl_t* control, int* fd) {
  if (control == nullptr || fd == nullptr)
    return fail(orErrorInvalidValue, "orIpcControlCreate: NULL argument");
  int page_fd = memfd_create("openreg-ipc-control", MFD_CLOEXEC);
  if (page_fd < 0 || ftruncate(page_fd, kPage) != 0) {
    if (page_fd >= 0) close(page_fd);
    return fail(orErrorMemoryAllocation,
                std::string("cannot create an IPC control block: ") + std::strerror(errno));
  }
  if (orError_t err = map_control(control, page_fd, true)) {
    close(page_fd);
    return err;
  }
  *fd = page_fd;
  return ok();
}

orError_t orIpcControlOpen(orIpcControl_t* control, int fd) {
  if (control == nullptr) return fail(orErrorInvalidValue, "orIpcControlOpen: control is NULL");
  return map_control(control, fd, false);
}

orError_t orIpcControlDestroy(orIpcControl_t control) {
  if (control == nullptr) return ok();
  if (control->fd >= 0) close(control->fd);
  delete control;  // the page stays mapped while a pending wait holds it
  return ok();
}

// LITERALINCLUDE START: DRIVER_IPC_RECORD_WAIT
orError_t orIpcControlRecord(orIpcControl_t control, int device, uint64_t* marker) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (control == nullptr || marker == nullptr || control->fd < 0) {
    return fail(orErrorInvalidValue,
                "orIpcControlRecord: needs a control block this process created");
  }
  if (orError_t err = check_device(device)) return err;
  auto pending = std::make_shared<PendingMarker>();
  pending->control = control->mapping;
  pending->marker = control->next_marker.fetch_add(1) + 1;
  for_each_stream(device, [&](orStream_t s) {
    if (is_capturing(s)) return;  // captured work runs only when its graph is replayed
    pending->remaining.fetch_add(1);
    submit(s, boxed_task(run_arrival, new Arrival{pending}, TaskKind::Host, release<Arrival>));
  });
  arrive(*pending);  // drop the recording thread's hold
  *marker = pending->marker;
  return ok();
}

orError_t orIpcStreamWaitControl(orStream_t stream, orIpcControl_t control, uint64_t marker) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (control == nullptr)
    return fail(orErrorInvalidValue, "orIpcStreamWaitControl: control is NULL");
  if (control->page->completed.load() >= marker) return ok();  // nothing pending
  orStream_t s = resolve_stream(stream);
  submit(s, boxed_task(wait_marker, new WaitArgs{control->mapping, static_cast<uint32_t>(marker)},
                       TaskKind::Host, release<WaitArgs>));
  return ok();
}
// LITERALINCLUDE END: DRIVER_IPC_RECORD_WAIT

orError_t orIpcControlAddRef(orIpcControl_t control, int delta, int64_t* count) {
  if (control == nullptr) return fail(orErrorInvalidValue, "orIpcControlAddRef: control is NULL");
  int64_t now = control->page->references.fetch_add(delta) + delta;
  if (count != nullptr) *count = now;
  return ok();
}

}  // extern "C"

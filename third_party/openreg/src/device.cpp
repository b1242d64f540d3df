// device.cpp: configuration, device selection, properties and error strings.
#include "internal.h"

#include <malloc.h>
#include <pthread.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace openreg {

namespace {
// What went wrong in this thread's last failed call (orGetLastErrorDetail).
thread_local std::string last_detail;

size_t parse_bytes(const char* text, size_t fallback) {
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text) return fallback;
  switch (*end) {
    case 'k':
    case 'K': value <<= 10; break;
    case 'm':
    case 'M': value <<= 20; break;
    case 'g':
    case 'G': value <<= 30; break;
    default: break;
  }
  return value == 0 ? fallback : static_cast<size_t>(value);
}

// LITERALINCLUDE START: DRIVER_READ_CONFIG
Config read_config() {
  Config c;
  if (const char* n = std::getenv("OPENREG_DEVICE_COUNT")) {
    int count = std::atoi(n);
    if (count >= 1 && count <= 16) c.physical_count = count;
  }
  // Like CUDA_VISIBLE_DEVICES: a comma-separated list of physical ids, read
  // up to the first entry that is not a valid, unused id.
  if (const char* v = std::getenv("OPENREG_VISIBLE_DEVICES")) {
    std::stringstream list(v);
    std::string item;
    while (std::getline(list, item, ',')) {
      char* end = nullptr;
      long id = std::strtol(item.c_str(), &end, 10);
      bool valid = end != item.c_str() && *end == '\0' && id >= 0 && id < c.physical_count;
      for (int seen : c.physical) valid = valid && seen != id;
      if (!valid) break;
      c.physical.push_back(static_cast<int>(id));
    }
  } else {
    for (int i = 0; i < c.physical_count; ++i) c.physical.push_back(i);
  }
  c.device_count = static_cast<int>(c.physical.size());
  c.memory_per_device = parse_bytes(std::getenv("OPENREG_DEVICE_MEMORY"), c.memory_per_device);
  c.memory_per_device = (c.memory_per_device + 4095) & ~size_t{4095};
  const char* blocking = std::getenv("OPENREG_LAUNCH_BLOCKING");
  c.launch_blocking = blocking != nullptr && std::strcmp(blocking, "1") == 0;
  return c;
}
// LITERALINCLUDE END: DRIVER_READ_CONFIG
}  // namespace

namespace {
// LITERALINCLUDE START: DRIVER_HOST_MALLOC_TUNING
// The emulated device's kernels are host code, and PyTorch's CPU kernels
// allocate host temporaries of megabytes. glibc serves those with fresh mmaps,
// each paying page faults, until the process happens to free one that large:
// a convolution then spends most of its time faulting in fresh pages. When the
// runtime starts, the driver fixes the thresholds so such temporaries are
// reused from the heap.
void tune_host_allocator() {
  const char* off = std::getenv("OPENREG_NO_MALLOC_TUNING");
  if (off != nullptr && std::strcmp(off, "1") == 0) return;
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
}
// LITERALINCLUDE END: DRIVER_HOST_MALLOC_TUNING
}  // namespace

// LITERALINCLUDE START: DRIVER_FORK_GUARD
namespace {
std::atomic<bool> started{false};
std::atomic<bool> forked_child{false};

// Registered when the library loads: the child of a fork after start-up
// inherits device mappings and stream state but none of the threads.
const bool fork_handler_installed = [] {
  pthread_atfork(nullptr, nullptr, [] {
    if (started.load()) forked_child.store(true);
  });
  return true;
}();
}  // namespace

void mark_started() {
  static std::once_flag once;
  std::call_once(once, tune_host_allocator);
  started.store(true);
}

orError_t check_not_forked() {
  if (__builtin_expect(!forked_child.load(std::memory_order_relaxed), 1)) return orSuccess;
  return fail(orErrorInitializationError,
              "the openreg runtime was started before this process was forked, and a forked "
              "child cannot use it (its worker threads did not survive the fork); use the "
              "'spawn' start method of multiprocessing");
}
// LITERALINCLUDE END: DRIVER_FORK_GUARD

orError_t fail(orError_t code, const std::string& detail) {
  last_detail = detail;
  return code;
}

const char* last_error_detail() { return last_detail.c_str(); }

const Config& config() {
  static const Config c = read_config();
  return c;
}

int& current_device() {
  thread_local int device = 0;
  return device;
}

orError_t check_device(int device) {
  if (device < 0 || device >= config().device_count) {
    return fail(orErrorInvalidDevice, "invalid device ordinal " + std::to_string(device) +
                                          " (the driver has " +
                                          std::to_string(config().device_count) + " devices)");
  }
  return ok();
}

}  // namespace openreg

using namespace openreg;

extern "C" {

const char* orGetErrorString(orError_t error) {
  switch (error) {
    case orSuccess: return "no error";
    case orErrorInvalidValue: return "invalid argument";
    case orErrorMemoryAllocation: return "out of memory";
    case orErrorInvalidDevice: return "invalid device ordinal";
    case orErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case orErrorInvalidDevicePointer: return "invalid device pointer";
    case orErrorInvalidResourceHandle: return "invalid resource handle";
    case orErrorNotReady: return "device not ready";
    case orErrorLaunchFailure: return "kernel failed on the device";
    case orErrorNotPermitted: return "operation not permitted";
    case orErrorInitializationError: return "initialization error";
  }
  return "unrecognized error code";
}

const char* orGetLastErrorDetail(void) { return last_error_detail(); }

orError_t orGetDeviceCount(int* count) {
  if (count == nullptr) return fail(orErrorInvalidValue, "orGetDeviceCount: count is NULL");
  *count = config().device_count;
  return ok();
}

orError_t orGetDevice(int* device) {
  if (device == nullptr) return fail(orErrorInvalidValue, "orGetDevice: device is NULL");
  *device = current_device();
  return ok();
}

orError_t orSetDevice(int device) {
  if (orError_t err = check_device(device)) return err;
  current_device() = device;
  return ok();
}

orError_t orGetDeviceProperties(orDeviceProp* prop, int device) {
  if (prop == nullptr) return fail(orErrorInvalidValue, "orGetDeviceProperties: prop is NULL");
  if (orError_t err = check_device(device)) return err;
  std::memset(prop, 0, sizeof(*prop));
  std::strncpy(prop->name, "OpenReg Emulated Device", sizeof(prop->name) - 1);
  prop->totalGlobalMem = config().memory_per_device;
  prop->major = 1;
  prop->minor = 0;
  prop->multiProcessorCount = 1;
  prop->pciBusID = config().physical[device];
  return ok();
}

orError_t orDeviceSynchronize(void) {
  OR_REFUSE_IN_FORKED_CHILD();
  return synchronize_device(current_device());
}

}  // extern "C"

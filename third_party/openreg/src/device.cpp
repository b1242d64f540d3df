// device.cpp: configuration, device selection, properties and error strings.
#include "internal.h"

#include <cstdlib>
#include <cstring>

namespace openreg {

namespace {
thread_local std::string last_detail;

size_t parse_bytes(const char* text, size_t fallback) {
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text) return fallback;
  switch (*end) {
    case 'k': case 'K': value <<= 10; break;
    case 'm': case 'M': value <<= 20; break;
    case 'g': case 'G': value <<= 30; break;
    default: break;
  }
  return value == 0 ? fallback : static_cast<size_t>(value);
}

Config read_config() {
  Config c;
  if (const char* n = std::getenv("OPENREG_DEVICE_COUNT")) {
    int count = std::atoi(n);
    if (count >= 1 && count <= 16) c.device_count = count;
  }
  c.memory_per_device = parse_bytes(std::getenv("OPENREG_DEVICE_MEMORY"), c.memory_per_device);
  c.memory_per_device = (c.memory_per_device + 4095) & ~size_t{4095};
  const char* blocking = std::getenv("OPENREG_LAUNCH_BLOCKING");
  c.launch_blocking = blocking != nullptr && std::strcmp(blocking, "1") == 0;
  return c;
}
}  // namespace

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
  return ok();
}

orError_t orDeviceSynchronize(void) { return synchronize_device(current_device()); }

}  // extern "C"

// OpenRegFunctions.cpp: device selection over the driver's orGetDevice/orSetDevice.
#include "OpenRegFunctions.h"

#include <cstdlib>
#include <cstring>

#include <c10/core/DeviceGuard.h>

#include "OpenRegException.h"

namespace c10::openreg {

// LITERALINCLUDE START: DEVICE_FUNCTIONS
DeviceIndex device_count() noexcept {
  // Asked once: the driver fixes its device count at start-up.
  static const DeviceIndex count = [] {
    int n = 0;
    return orGetDeviceCount(&n) == orSuccess ? static_cast<DeviceIndex>(n) : DeviceIndex{0};
  }();
  return count;
}

void check_device_index(DeviceIndex device) {
  TORCH_CHECK(device >= 0 && device < device_count(), "Invalid openreg device index ", int(device),
              ": this process has ", int(device_count()),
              " openreg device(s), so the index must be in [0, ", int(device_count()), ")");
}

DeviceIndex current_device() {
  int device = 0;
  OPENREG_CHECK(orGetDevice(&device));
  return static_cast<DeviceIndex>(device);
}

void set_device(DeviceIndex device) {
  check_device_index(device);
  OPENREG_CHECK(orSetDevice(device));
}

DeviceIndex exchange_device(DeviceIndex device) {
  DeviceIndex previous = current_device();
  if (device != previous) set_device(device);
  return previous;
}
// LITERALINCLUDE END: DEVICE_FUNCTIONS

DeviceIndex maybe_exchange_device(DeviceIndex device) { return exchange_device(device); }

void synchronize_device(DeviceIndex device) {
  c10::DeviceGuard guard(Device(DeviceType::PrivateUse1, device));
  OPENREG_CHECK(orDeviceSynchronize());
}

DeviceProperties get_device_properties(DeviceIndex device) {
  check_device_index(device);
  orDeviceProp prop;
  OPENREG_CHECK(orGetDeviceProperties(&prop, device));
  return {prop.name,  prop.totalGlobalMem,      prop.major,
          prop.minor, prop.multiProcessorCount, prop.pciBusID};
}

// True when the variable is set to anything but "" or "0".
bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
}

}  // namespace c10::openreg

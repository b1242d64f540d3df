// OpenRegFunctions.h: device count and the current device, checked against the driver.
#pragma once

#include <c10/core/Device.h>

#include <string>

namespace c10::openreg {

DeviceIndex device_count() noexcept;
DeviceIndex current_device();
void set_device(DeviceIndex device);
DeviceIndex exchange_device(DeviceIndex device);
DeviceIndex maybe_exchange_device(DeviceIndex device);
// Raises a RuntimeError naming the index and the device count.
void check_device_index(DeviceIndex device);

// Waits for the work queued on every stream of `device`.
void synchronize_device(DeviceIndex device);

struct DeviceProperties {
  std::string name;
  size_t total_memory;
  int major;
  int minor;
  int multi_processor_count;
  int physical_id;  // which emulated device this index is (OPENREG_VISIBLE_DEVICES)
};
DeviceProperties get_device_properties(DeviceIndex device);

// The one reader of the backend's OPENREG_* switches: true when the variable is
// set to anything but "" or "0" ("1", "true", "yes" all switch it on).
bool env_flag(const char* name);

}  // namespace c10::openreg

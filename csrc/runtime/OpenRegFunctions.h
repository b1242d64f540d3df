// OpenRegFunctions.h: device count and the current device, checked against the driver.
#pragma once

#include <c10/core/Device.h>

namespace c10::openreg {

DeviceIndex device_count() noexcept;
DeviceIndex current_device();
void set_device(DeviceIndex device);
DeviceIndex exchange_device(DeviceIndex device);
DeviceIndex maybe_exchange_device(DeviceIndex device);
// Raises a RuntimeError naming the index and the device count.
void check_device_index(DeviceIndex device);

}  // namespace c10::openreg

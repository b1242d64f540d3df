// OpenRegHooks.h: PrivateUse1HooksInterface, how ATen asks the backend device-wide questions.
#pragma once

#include <ATen/detail/PrivateUse1HooksInterface.h>

namespace c10::openreg {

struct OpenRegHooksInterface final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override;
  void init() const override;
  bool hasPrimaryContext(DeviceIndex device_index) const override;

  DeviceIndex deviceCount() const override;
  void setCurrentDevice(DeviceIndex device) const override;
  DeviceIndex getCurrentDevice() const override;
  DeviceIndex exchangeDevice(DeviceIndex device) const override;
  DeviceIndex maybeExchangeDevice(DeviceIndex device) const override;

  const at::Generator& getDefaultGenerator(DeviceIndex device_index) const override;
  at::Generator getNewGenerator(DeviceIndex device_index = -1) const override;

  at::Device getDeviceFromPtr(void* data) const override;
  bool isPinnedPtr(const void* data) const override;
  at::Allocator* getPinnedMemoryAllocator() const override;
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t new_bytes) const override;
};

// Grows or shrinks a storage in place, keeping its contents (up to the smaller size).
void resize_storage_bytes(const c10::Storage& storage, size_t new_bytes);

}  // namespace c10::openreg

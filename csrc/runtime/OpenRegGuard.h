// OpenRegGuard.h: DeviceGuardImplInterface for openreg: devices, streams and events.
#pragma once

#include <c10/core/impl/DeviceGuardImplInterface.h>

namespace c10::openreg {

// LITERALINCLUDE START: GUARD_IMPL_CLASS
struct OpenRegGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  static constexpr DeviceType static_type = DeviceType::PrivateUse1;

  DeviceType type() const override { return static_type; }

  // Devices
  Device exchangeDevice(Device device) const override;
  Device getDevice() const override;
  void setDevice(Device device) const override;
  void uncheckedSetDevice(Device device) const noexcept override;
  DeviceIndex deviceCount() const noexcept override;
  DeviceCapability getDeviceCapability(Device device) const override;

  // Streams
  Stream getStream(Device device) const override;
  Stream getDefaultStream(Device device) const override;
  Stream getStreamFromGlobalPool(Device device, bool is_high_priority) const override;
  Stream getNewStream(Device device, int priority) const override;
  Stream exchangeStream(Stream stream) const override;
  void* getStreamNativeHandle(const Stream stream) const override;
  bool queryStream(const Stream& stream) const override;
  void synchronizeStream(const Stream& stream) const override;
  bool isStreamCapturing(const Stream& stream) const override;
  void synchronizeDevice(const DeviceIndex device_index) const override;
  void recordDataPtrOnStream(const DataPtr& data_ptr, const Stream& stream) const override;

  // Events
  void record(void** event, const Stream& stream, const DeviceIndex device_index,
              const EventFlag flag) const override;
  void block(void* event, const Stream& stream) const override;
  bool queryEvent(void* event) const override;
  void synchronizeEvent(void* event) const override;
  double elapsedTime(void* start, void* end, const DeviceIndex device_index) const override;
  void destroyEvent(void* event, const DeviceIndex device_index) const noexcept override;
};
// LITERALINCLUDE END: GUARD_IMPL_CLASS

}  // namespace c10::openreg

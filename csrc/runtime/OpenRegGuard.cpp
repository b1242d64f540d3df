// OpenRegGuard.cpp: the guard's methods, each a thin call into the driver.
#include "OpenRegGuard.h"

#include <c10/core/DeviceGuard.h>

#include "OpenRegDeviceAllocator.h"
#include "OpenRegException.h"
#include "OpenRegFunctions.h"
#include "OpenRegStream.h"

namespace c10::openreg {

// LITERALINCLUDE START: GUARD_DEVICE_METHODS
Device OpenRegGuardImpl::exchangeDevice(Device device) const {
  TORCH_CHECK(device.type() == static_type, "expected an openreg device, got ", device);
  return Device(static_type, exchange_device(device.index()));
}

Device OpenRegGuardImpl::getDevice() const { return Device(static_type, current_device()); }

void OpenRegGuardImpl::setDevice(Device device) const {
  TORCH_CHECK(device.type() == static_type, "expected an openreg device, got ", device);
  set_device(device.index());
}

void OpenRegGuardImpl::uncheckedSetDevice(Device device) const noexcept {
  orSetDevice(device.index());  // must not throw: used while unwinding
}

DeviceIndex OpenRegGuardImpl::deviceCount() const noexcept { return device_count(); }
// LITERALINCLUDE END: GUARD_DEVICE_METHODS

// LITERALINCLUDE START: GUARD_DEVICE_CAPABILITY
DeviceCapability OpenRegGuardImpl::getDeviceCapability(Device device) const {
  check_device_index(device.index());
  DeviceCapability capability;  // every dtype: storage and copies handle any element type
  auto& types = capability.capability_data.supported_scalar_types;
  // Quantized tensors: per-tensor affine in whole bytes (qint8, quint8, qint32)
  // only; the sub-byte types pack elements and are refused.
  types.has_QUInt4x2 = types.has_QUInt2x4 = false;
  return capability;
}
// LITERALINCLUDE END: GUARD_DEVICE_CAPABILITY

// LITERALINCLUDE START: GUARD_STREAM_METHODS
Stream OpenRegGuardImpl::getStream(Device device) const {
  return getCurrentOpenRegStream(device.index()).unwrap();
}

Stream OpenRegGuardImpl::getDefaultStream(Device device) const {
  return getDefaultOpenRegStream(device.index()).unwrap();
}

Stream OpenRegGuardImpl::getStreamFromGlobalPool(Device device, bool is_high_priority) const {
  return getStreamFromPool(is_high_priority ? -1 : 0, device.index()).unwrap();
}

Stream OpenRegGuardImpl::getNewStream(Device device, int priority) const {
  return getStreamFromPool(priority, device.index()).unwrap();
}

Stream OpenRegGuardImpl::exchangeStream(Stream stream) const {
  OpenRegStream next(stream);
  OpenRegStream previous = getCurrentOpenRegStream(next.device_index());
  setCurrentOpenRegStream(next);
  return previous.unwrap();
}

void* OpenRegGuardImpl::getStreamNativeHandle(const Stream stream) const {
  return OpenRegStream(stream).stream();
}

bool OpenRegGuardImpl::queryStream(const Stream& stream) const {
  return OpenRegStream(stream).query();
}

void OpenRegGuardImpl::synchronizeStream(const Stream& stream) const {
  OpenRegStream(stream).synchronize();
}

bool OpenRegGuardImpl::isStreamCapturing(const Stream& stream) const {
  return OpenRegStream(stream).is_capturing();
}

void OpenRegGuardImpl::synchronizeDevice(const DeviceIndex device_index) const {
  synchronize_device(device_index);
}

void OpenRegGuardImpl::recordDataPtrOnStream(const DataPtr& data_ptr, const Stream& stream) const {
  device_allocator()->recordStream(data_ptr, stream);
}
// LITERALINCLUDE END: GUARD_STREAM_METHODS

// LITERALINCLUDE START: GUARD_EVENT_METHODS
void OpenRegGuardImpl::record(void** event, const Stream& stream, const DeviceIndex device_index,
                              const EventFlag flag) const {
  TORCH_CHECK(device_index == -1 || device_index == stream.device_index(), "event device index ",
              int(device_index), " does not match the stream's device ",
              int(stream.device_index()));
  OpenRegStream or_stream(stream);
  c10::DeviceGuard guard(stream.device());
  // Events are created lazily, on first record, with the flag's timing mode.
  if (*event == nullptr) {
    unsigned flags = flag == EventFlag::BACKEND_DEFAULT ? orEventDefault : orEventDisableTiming;
    OPENREG_CHECK(orEventCreateWithFlags(reinterpret_cast<orEvent_t*>(event), flags));
  }
  OPENREG_CHECK(orEventRecord(static_cast<orEvent_t>(*event), or_stream.stream()));
}

void OpenRegGuardImpl::block(void* event, const Stream& stream) const {
  if (event == nullptr) return;  // never recorded: nothing to wait for
  OpenRegStream or_stream(stream);
  c10::DeviceGuard guard(stream.device());
  OPENREG_CHECK(orStreamWaitEvent(or_stream.stream(), static_cast<orEvent_t>(event)));
}

bool OpenRegGuardImpl::queryEvent(void* event) const {
  if (event == nullptr) return true;
  orError_t err = orEventQuery(static_cast<orEvent_t>(event));
  if (err == orErrorNotReady) return false;
  OPENREG_CHECK(err);
  return true;
}

void OpenRegGuardImpl::synchronizeEvent(void* event) const {
  if (event == nullptr) return;
  OPENREG_CHECK(orEventSynchronize(static_cast<orEvent_t>(event)));
}

double OpenRegGuardImpl::elapsedTime(void* start, void* end, const DeviceIndex device_index) const {
  return event_elapsed_time(start, end);
}

void OpenRegGuardImpl::destroyEvent(void* event, const DeviceIndex device_index) const noexcept {
  if (event != nullptr) orEventDestroy(static_cast<orEvent_t>(event));
}
// LITERALINCLUDE END: GUARD_EVENT_METHODS

// LITERALINCLUDE START: GUARD_REGISTER
C10_REGISTER_GUARD_IMPL(PrivateUse1, OpenRegGuardImpl);
// LITERALINCLUDE END: GUARD_REGISTER

}  // namespace c10::openreg

// OpenRegHooks.cpp: the hooks' answers, and their registration at library load.
#include "OpenRegHooks.h"

#include <c10/core/DeviceGuard.h>
#include <c10/core/StorageImpl.h>

#include "OpenRegDeviceAllocator.h"
#include "OpenRegException.h"
#include "OpenRegFunctions.h"
#include "OpenRegGenerator.h"
#include "OpenRegHostAllocator.h"
#include "OpenRegStream.h"

namespace c10::openreg {

// LITERALINCLUDE START: HOOKS_METHODS
bool OpenRegHooksInterface::isAvailable() const { return device_count() > 0; }

void OpenRegHooksInterface::init() const {
  // Touch the driver once so a broken installation fails here, loudly.
  int count = 0;
  OPENREG_CHECK(orGetDeviceCount(&count));
}

bool OpenRegHooksInterface::hasPrimaryContext(DeviceIndex device_index) const {
  return device_index >= 0 && device_index < device_count();
}

DeviceIndex OpenRegHooksInterface::deviceCount() const { return device_count(); }
void OpenRegHooksInterface::setCurrentDevice(DeviceIndex device) const { set_device(device); }
DeviceIndex OpenRegHooksInterface::getCurrentDevice() const { return current_device(); }
DeviceIndex OpenRegHooksInterface::exchangeDevice(DeviceIndex device) const {
  return exchange_device(device);
}
DeviceIndex OpenRegHooksInterface::maybeExchangeDevice(DeviceIndex device) const {
  return maybe_exchange_device(device);
}

const at::Generator& OpenRegHooksInterface::getDefaultGenerator(DeviceIndex device_index) const {
  return default_generator(device_index);
}

at::Generator OpenRegHooksInterface::getNewGenerator(DeviceIndex device_index) const {
  return new_generator(device_index);
}

at::Device OpenRegHooksInterface::getDeviceFromPtr(void* data) const {
  orPointerAttributes attr;
  OPENREG_CHECK(orPointerGetAttributes(&attr, data));
  TORCH_CHECK(attr.type == orMemoryTypeDevice, "the pointer is not openreg device memory");
  return at::Device(DeviceType::PrivateUse1, static_cast<DeviceIndex>(attr.device));
}

bool OpenRegHooksInterface::isPinnedPtr(const void* data) const {
  orPointerAttributes attr;
  return orPointerGetAttributes(&attr, data) == orSuccess && attr.type == orMemoryTypeHost;
}

at::Allocator* OpenRegHooksInterface::getPinnedMemoryAllocator() const { return host_allocator(); }

void OpenRegHooksInterface::resizePrivateUse1Bytes(const c10::Storage& storage,
                                                   size_t new_bytes) const {
  resize_storage_bytes(storage, new_bytes);
}
// LITERALINCLUDE END: HOOKS_METHODS

// LITERALINCLUDE START: HOOKS_RESIZE_STORAGE
void resize_storage_bytes(const c10::Storage& storage, size_t new_bytes) {
  StorageImpl* impl = storage.unsafeGetStorageImpl();
  TORCH_CHECK(impl->resizable(), "Trying to resize storage that is not resizable");
  size_t old_bytes = impl->nbytes();
  if (new_bytes == old_bytes) return;
  DeviceIndex device =
      impl->device().type() == DeviceType::PrivateUse1 ? impl->device().index() : current_device();
  c10::DeviceGuard guard(Device(DeviceType::PrivateUse1, device));
  DataPtr fresh = impl->allocator()->allocate(new_bytes);
  size_t keep = std::min(old_bytes, new_bytes);
  if (keep > 0 && impl->data() != nullptr) {
    // Ordered on the current stream like any kernel, so no host round trip.
    OPENREG_CHECK(orMemcpyAsync(fresh.get(), impl->data(), keep, orMemcpyDeviceToDevice,
                                getCurrentOpenRegStream(device).stream()));
  }
  impl->set_data_ptr_noswap(std::move(fresh));
  impl->set_nbytes(new_bytes);
}
// LITERALINCLUDE END: HOOKS_RESIZE_STORAGE

// LITERALINCLUDE START: HOOKS_REGISTER
namespace {
// Registered when libtorch_openreg is loaded, before any tensor exists. The
// name is registered here too, so C++ programs without Python see "openreg";
// torch.utils.rename_privateuse1_backend("openreg") later agrees with it.
const bool hooks_registered = [] {
  c10::register_privateuse1_backend("openreg");
  static OpenRegHooksInterface hooks;
  at::RegisterPrivateUse1HooksInterface(&hooks);
  return true;
}();
}  // namespace
// LITERALINCLUDE END: HOOKS_REGISTER

}  // namespace c10::openreg

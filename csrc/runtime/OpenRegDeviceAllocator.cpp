// OpenRegDeviceAllocator.cpp: the c10::DeviceAllocator PyTorch calls: it forwards to each device's caching allocator.
#include "OpenRegDeviceAllocator.h"

#include <c10/core/DeviceGuard.h>

#include "OpenRegCachingAllocator.h"
#include "OpenRegException.h"
#include "OpenRegFunctions.h"
#include "OpenRegStream.h"

namespace c10::openreg {

// Each device's state and lock live in its caching allocator
// (OpenRegCachingAllocator.h); the front only finds it and forwards.
using caching::Block;
using caching::delete_block;
using caching::device_caching_allocator;

namespace {
// Pool keys are negative: stream ids are not.
StreamId pool_key(MempoolId_t pool) { return -static_cast<StreamId>(pool.first); }
}  // namespace

// LITERALINCLUDE START: ALLOCATOR_ALLOCATE
DataPtr OpenRegDeviceAllocator::allocate(size_t nbytes) {
  DeviceIndex device = current_device();
  if (nbytes == 0)
    return {nullptr, nullptr, &delete_block, Device(DeviceType::PrivateUse1, device)};
  StreamId stream = getCurrentOpenRegStream(device).id();
  Block* b = device_caching_allocator(device).malloc(nbytes, stream);
  return {b->ptr, b, &delete_block, Device(DeviceType::PrivateUse1, device)};
}
// LITERALINCLUDE END: ALLOCATOR_ALLOCATE

DeleterFnPtr OpenRegDeviceAllocator::raw_deleter() const { return &delete_block; }

void OpenRegDeviceAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  OPENREG_CHECK(orMemcpy(dest, src, count, orMemcpyDeviceToDevice));
}

void OpenRegDeviceAllocator::emptyCache(MempoolId_t) {
  for (DeviceIndex i = 0; i < device_count(); ++i) device_caching_allocator(i).empty_cache();
}

// LITERALINCLUDE START: ALLOCATOR_RECORD_STREAM_DATAPTR
namespace {
SharedMemoryDeleters& shared_memory_deleters() {
  static SharedMemoryDeleters deleters;  // set once, while the library loads
  return deleters;
}
}  // namespace

void set_shared_memory_deleters(const SharedMemoryDeleters& deleters) {
  shared_memory_deleters() = deleters;
}

void OpenRegDeviceAllocator::recordStream(const DataPtr& ptr, c10::Stream stream) {
  if (ptr.get() == nullptr) return;
  const SharedMemoryDeleters& shared = shared_memory_deleters();
  // Memory mapped from another process is reused by its owner only after this
  // process released it, and releasing it waits for our work on every stream.
  if (shared.received != nullptr && ptr.get_deleter() == shared.received) return;
  const DataPtr& own = (shared.sent != nullptr && ptr.get_deleter() == shared.sent)
                           ? *shared.sent_block(ptr.get_context())
                           : ptr;
  TORCH_CHECK(own.get_deleter() == &delete_block,
              "record_stream: the memory was not allocated by the openreg allocator");
  auto* b = static_cast<Block*>(own.get_context());
  device_caching_allocator(b->device).record_stream(b, stream);
}
// LITERALINCLUDE END: ALLOCATOR_RECORD_STREAM_DATAPTR

CachingDeviceAllocator::DeviceStats OpenRegDeviceAllocator::getDeviceStats(DeviceIndex device) {
  return device_caching_allocator(device).stats();
}

void OpenRegDeviceAllocator::resetAccumulatedStats(DeviceIndex device) {
  device_caching_allocator(device).reset_accumulated_stats();
}

void OpenRegDeviceAllocator::resetPeakStats(DeviceIndex device) {
  device_caching_allocator(device).reset_peak_stats();
}

std::pair<size_t, size_t> OpenRegDeviceAllocator::getMemoryInfo(DeviceIndex device) {
  check_device_index(device);
  c10::DeviceGuard guard(Device(DeviceType::PrivateUse1, device));
  size_t free_bytes = 0, total = 0;
  OPENREG_CHECK(orMemGetInfo(&free_bytes, &total));
  return {free_bytes, total};
}

void OpenRegDeviceAllocator::setMemoryFraction(double fraction, DeviceIndex device) {
  TORCH_CHECK(fraction > 0 && fraction <= 1, "memory fraction must be in (0, 1], got ", fraction);
  auto [free_bytes, total] = getMemoryInfo(device);
  device_caching_allocator(device).set_memory_fraction(fraction, total);
}

double OpenRegDeviceAllocator::getMemoryFraction(DeviceIndex device) {
  return device_caching_allocator(device).memory_fraction();
}

void OpenRegDeviceAllocator::recordHistory(bool enabled, size_t max_entries) {
  for (DeviceIndex i = 0; i < device_count(); ++i) {
    device_caching_allocator(i).record_history(enabled, max_entries);
  }
}

AllocatorSnapshot OpenRegDeviceAllocator::snapshot() {
  AllocatorSnapshot result;
  for (DeviceIndex i = 0; i < device_count(); ++i) device_caching_allocator(i).snapshot(result);
  return result;
}

void OpenRegDeviceAllocator::beginAllocateToPool(DeviceIndex device, MempoolId_t pool,
                                                 StreamId stream) {
  device_caching_allocator(device).begin_allocate_to_pool(stream, pool_key(pool));
}

void OpenRegDeviceAllocator::endAllocateToPool(DeviceIndex device) {
  device_caching_allocator(device).end_allocate_to_pool();
}

void OpenRegDeviceAllocator::releasePool(DeviceIndex device, MempoolId_t pool) {
  device_caching_allocator(device).release_pool(pool_key(pool));
}

// LITERALINCLUDE START: ALLOCATOR_REGISTER
OpenRegDeviceAllocator* device_allocator() {
  static OpenRegDeviceAllocator allocator;
  return &allocator;
}

REGISTER_ALLOCATOR(DeviceType::PrivateUse1, device_allocator());
// LITERALINCLUDE END: ALLOCATOR_REGISTER

}  // namespace c10::openreg

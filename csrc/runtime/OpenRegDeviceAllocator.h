// OpenRegDeviceAllocator.h: the caching allocator that hands out openreg device memory.
#pragma once

#include <c10/core/CachingDeviceAllocator.h>

namespace c10::openreg {

// Carves tensors out of driver allocations and keeps freed blocks for reuse
// by the same stream, so the driver (whose orFree synchronizes the device,
// like cudaFree) is called rarely.
class OpenRegDeviceAllocator final : public c10::DeviceAllocator {
 public:
  DataPtr allocate(size_t nbytes) override;
  DeleterFnPtr raw_deleter() const override;
  void copy_data(void* dest, const void* src, std::size_t count) const override;

  bool initialized() override { return true; }
  void emptyCache(MempoolId_t mempool_id = {0, 0}) override;
  void recordStream(const DataPtr& ptr, c10::Stream stream) override;
  CachingDeviceAllocator::DeviceStats getDeviceStats(DeviceIndex device) override;
  void resetAccumulatedStats(DeviceIndex device) override;
  void resetPeakStats(DeviceIndex device) override;
  std::pair<size_t, size_t> getMemoryInfo(DeviceIndex device) override;
};

OpenRegDeviceAllocator* device_allocator();

}  // namespace c10::openreg

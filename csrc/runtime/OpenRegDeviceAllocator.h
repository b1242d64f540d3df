// OpenRegDeviceAllocator.h: the device allocator PyTorch calls, its snapshots, and its hand-off to ipc/.
#pragma once

#include <c10/core/CachingDeviceAllocator.h>

#include <string>
#include <vector>

namespace c10::openreg {

// One block of a segment, as the snapshot reports it.
struct BlockSnapshot {
  size_t address;
  size_t size;
  size_t requested_size;
  std::string state;  // "active_allocated", "active_pending_free" or "inactive"
};

// One driver allocation (a segment) and the blocks it is split into.
struct SegmentSnapshot {
  DeviceIndex device;
  size_t address;
  size_t total_size;
  size_t allocated_size;
  size_t active_size;
  size_t requested_size;
  StreamId stream;
  bool is_large;
  std::vector<BlockSnapshot> blocks;
};

// One recorded allocator event (when history is on).
struct TraceEntry {
  std::string action;  // alloc, free_requested, free_completed, segment_alloc, segment_free, oom
  size_t address;
  size_t size;
  StreamId stream;
  int64_t time_us;
};

struct AllocatorSnapshot {
  std::vector<SegmentSnapshot> segments;
  std::vector<std::vector<TraceEntry>> device_traces;  // per device, oldest first
};

// LITERALINCLUDE START: ALLOCATOR_FRONT_CLASS
// Carves tensors out of large driver allocations (segments), splits and merges
// blocks, and keeps freed blocks for reuse by the same stream. The driver,
// whose orFree synchronizes the device like cudaFree, is called rarely. This is
// the front PyTorch calls; each device's state and lock live in a per-device
// DeviceCachingAllocator (OpenRegCachingAllocator.h) that the methods forward to
// (getMemoryInfo asks the driver itself).
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

  // Caps what the allocator may reserve on `device` at fraction * capacity.
  void setMemoryFraction(double fraction, DeviceIndex device);
  double getMemoryFraction(DeviceIndex device);
  void recordHistory(bool enabled, size_t max_entries);
  AllocatorSnapshot snapshot();

  // Graph capture: while a stream captures, its allocations come from a private
  // pool that only captures into the same pool reuse, so the memory a graph
  // replays into stays its own until the graph is reset.
  void beginAllocateToPool(DeviceIndex device, MempoolId_t pool, StreamId stream);
  void endAllocateToPool(DeviceIndex device);
  void releasePool(DeviceIndex device, MempoolId_t pool);
};

OpenRegDeviceAllocator* device_allocator();
// LITERALINCLUDE END: ALLOCATOR_FRONT_CLASS

// A storage shared with another process (csrc/ipc) holds its memory under a
// deleter of its own: the sender wraps the allocator's block, the receiver maps
// the sender's pages. The sharing component tells the allocator both, so that
// Tensor.record_stream keeps working on shared storages.
struct SharedMemoryDeleters {
  DeleterFnPtr sent = nullptr;                            // wraps one of our blocks
  const DataPtr* (*sent_block)(void* context) = nullptr;  // the wrapped block
  DeleterFnPtr received = nullptr;                        // another process's memory
};
void set_shared_memory_deleters(const SharedMemoryDeleters& deleters);

}  // namespace c10::openreg

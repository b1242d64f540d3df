// OpenRegCachingAllocator.h: one device's caching allocator (blocks, segments, free pools, its lock).
#pragma once

#include <c10/core/Stream.h>
#include <openreg.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "OpenRegDeviceAllocator.h"
#include "OpenRegFunctions.h"

// Shared by the allocator's own files only: the caching core
// (OpenRegCachingAllocator.cpp), its statistics and history
// (OpenRegAllocatorStats.cpp) and the front PyTorch calls
// (OpenRegDeviceAllocator.cpp). Everything else goes through the front.
namespace c10::openreg {
// Hidden from other libraries: a function the shared library exports could be
// replaced when it loads, so the compiler would call each one out of line, even
// within one file; hidden, the hot paths inline as they would in one file.
namespace __attribute__((visibility("hidden"))) caching {

  struct Block;

  struct BlockOrder {  // best fit: same stream, smallest size, lowest address
    bool operator()(const Block* a, const Block* b) const;
  };

  struct Pool {
    bool small;
    std::set<Block*, BlockOrder> free_blocks;
  };

  // LITERALINCLUDE START: ALLOCATOR_BLOCK
  // A piece of a segment. Neighbours in the segment are linked, so a freed block
  // merges with free neighbours and whole free segments can go back to the driver.
  struct Block {
    DeviceIndex device;
    StreamId stream;
    Pool* pool;
    char* ptr;
    size_t size;
    size_t requested = 0;
    bool allocated = false;
    Block* prev = nullptr;
    Block* next = nullptr;
    std::vector<Stream> used_on;     // streams added by recordStream
    std::vector<orEvent_t> pending;  // must complete before the block is free
    bool stashed = false;            // freed, waiting in recent_ (see free_block)

    bool is_split() const { return prev != nullptr || next != nullptr; }
  };
  // LITERALINCLUDE END: ALLOCATOR_BLOCK

  struct AddressOrder {
    bool operator()(const Block* a, const Block* b) const { return a->ptr < b->ptr; }
  };

  // Inline: the pools' sets compare blocks on every insert, erase and lookup.
  inline bool BlockOrder::operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream) return a->stream < b->stream;
    if (a->size != b->size) return a->size < b->size;
    return a->ptr < b->ptr;
  }

  struct SizeKey {
    StreamId stream;
    size_t size;
    bool operator==(const SizeKey& o) const { return stream == o.stream && size == o.size; }
  };
  struct SizeKeyHash {
    size_t operator()(const SizeKey& k) const {
      return std::hash<size_t>()(k.size) ^ (k.stream * 0x9E3779B97F4A7C15ull);
    }
  };

  // LITERALINCLUDE START: ALLOCATOR_PER_DEVICE_CLASS
  // The caching allocator of one device. Every public method takes the device's
  // lock; the private ones run under it and are reached only from the public
  // ones, so no state is touched without the lock.
  class DeviceCachingAllocator {
   public:
    explicit DeviceCachingAllocator(DeviceIndex device) : device_(device) {}

    Block* malloc(size_t nbytes, StreamId stream);
    void free(Block* b);
    void record_stream(Block* b, const Stream& stream);
    void empty_cache();

    CachingDeviceAllocator::DeviceStats stats();
    void reset_accumulated_stats();
    void reset_peak_stats();
    void set_memory_fraction(double fraction, size_t total);
    double memory_fraction();
    void record_history(bool enabled, size_t max_entries);
    void snapshot(AllocatorSnapshot& out);

    void begin_allocate_to_pool(StreamId stream, StreamId key);
    void end_allocate_to_pool();
    void release_pool(StreamId key);

   private:
    void record(const char* action, const void* address, size_t size, StreamId stream);
    void report_to_profiler(const char* action, const void* address, size_t size);
    void insert_free(Block* b);
    void remove_free(Block* b);
    size_t reserved() const;
    Block* new_segment(size_t size, size_t nbytes, StreamId stream, Pool* pool);
    void split(Block* b, size_t size);
    void free_block(Block* b);
    void merge_into_pool(Block* b);
    void merge_recent();
    void collect_waiting();
    void release_segment(Block* b);
    void release_cached();
    [[noreturn]] void out_of_memory(size_t nbytes, const char* why);

    const DeviceIndex device_;
    std::mutex mu_;
    // Freed blocks not merged yet, by (stream, size): a request of the same size
    // takes one back without splitting or merging anything.
    std::unordered_map<SizeKey, std::vector<Block*>, SizeKeyHash> recent_;
    size_t recent_count_ = 0;
    Pool small_{true, {}};
    Pool large_{false, {}};
    std::set<Block*, AddressOrder> segments_;  // the first block of every segment
    std::deque<Block*> waiting_;               // freed, waiting for other streams' events
    CachingDeviceAllocator::DeviceStats stats_;
    size_t limit_ = SIZE_MAX;  // from the memory fraction
    double fraction_ = 1.0;
    std::deque<TraceEntry> trace_;
    size_t trace_max_ = 0;            // 0: history off
    StreamId capturing_stream_ = -1;  // the stream whose allocations go to a pool
    StreamId pool_key_ = 0;           // the pool's key, in place of a stream id
  };
  // LITERALINCLUDE END: ALLOCATOR_PER_DEVICE_CLASS

  // LITERALINCLUDE START: ALLOCATOR_PER_DEVICE_LOOKUP
  // The one way to a device's allocator: the index is checked here, so no
  // caller can reach past the end of the table.
  inline DeviceCachingAllocator& device_caching_allocator(DeviceIndex device) {
    static const auto* all = [] {
      auto* v = new std::vector<DeviceCachingAllocator*>();  // leaked: blocks may be freed at exit
      for (DeviceIndex i = 0; i < device_count(); ++i) v->push_back(new DeviceCachingAllocator(i));
      return v;
    }();
    check_device_index(device);
    return *(*all)[device];
  }
  // LITERALINCLUDE END: ALLOCATOR_PER_DEVICE_LOOKUP

  // The deleter of every DataPtr the allocator hands out (OpenRegCachingAllocator.cpp).
  void delete_block(void* ctx);

}  // namespace caching
}  // namespace c10::openreg

// OpenRegDeviceAllocator.cpp: segments, block splitting and merging, stream-ordered reuse, stats.
// LITERALINCLUDE START: ALLOCATOR_OPENREG_DEVICE_ALLOCATOR_INCLUDES
#include "OpenRegDeviceAllocator.h"

#include <c10/core/DeviceGuard.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <unordered_map>
#include <sstream>

#include "OpenRegException.h"
#include "OpenRegFunctions.h"
#include "OpenRegStream.h"
// LITERALINCLUDE END: ALLOCATOR_OPENREG_DEVICE_ALLOCATOR_INCLUDES

namespace c10::openreg {

namespace {
using c10::CachingAllocator::Stat;
using c10::CachingAllocator::StatArray;
using c10::CachingAllocator::StatType;

// LITERALINCLUDE START: ALLOCATOR_K_MIN_BLOCK
constexpr size_t kMinBlock = 512;              // every block is a multiple of this
// LITERALINCLUDE END: ALLOCATOR_K_MIN_BLOCK
// LITERALINCLUDE START: ALLOCATOR_K_SMALL_SIZE
constexpr size_t kSmallSize = 1 << 20;         // requests up to 1 MiB share small segments
// LITERALINCLUDE END: ALLOCATOR_K_SMALL_SIZE
// LITERALINCLUDE START: ALLOCATOR_K_SMALL_SEGMENT
constexpr size_t kSmallSegment = 2 << 20;      // small segments are 2 MiB
// LITERALINCLUDE END: ALLOCATOR_K_SMALL_SEGMENT
// LITERALINCLUDE START: ALLOCATOR_K_MIN_LARGE_SEGMENT
constexpr size_t kMinLargeSegment = 20 << 20;  // requests of 1-10 MiB share 20 MiB segments
// LITERALINCLUDE END: ALLOCATOR_K_MIN_LARGE_SEGMENT
// LITERALINCLUDE START: ALLOCATOR_K_LARGE_ROUND
constexpr size_t kLargeRound = 2 << 20;        // larger requests get their own, 2 MiB rounded
// LITERALINCLUDE END: ALLOCATOR_K_LARGE_ROUND

// LITERALINCLUDE START: ALLOCATOR_ROUND_SIZE
size_t round_size(size_t n) { return n < kMinBlock ? kMinBlock : (n + kMinBlock - 1) / kMinBlock * kMinBlock; }
// LITERALINCLUDE END: ALLOCATOR_ROUND_SIZE

// LITERALINCLUDE START: ALLOCATOR_SEGMENT_SIZE
size_t segment_size(size_t rounded) {
  if (rounded <= kSmallSize) return kSmallSegment;
  if (rounded < kMinLargeSegment / 2) return kMinLargeSegment;
  return (rounded + kLargeRound - 1) / kLargeRound * kLargeRound;
}
// LITERALINCLUDE END: ALLOCATOR_SEGMENT_SIZE

// LITERALINCLUDE START: ALLOCATOR_FORMAT_SIZE
// "256.00 MiB", as CUDA's out-of-memory messages write sizes.
std::string format_size(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.2f %s", value, units[unit]);
  return text;
}
// LITERALINCLUDE END: ALLOCATOR_FORMAT_SIZE

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Block;

// LITERALINCLUDE START: ALLOCATOR_DEF_BLOCK_ORDER
struct BlockOrder {  // best fit: same stream, smallest size, lowest address
  bool operator()(const Block* a, const Block* b) const;
};
// LITERALINCLUDE END: ALLOCATOR_DEF_BLOCK_ORDER

// LITERALINCLUDE START: ALLOCATOR_POOL
struct Pool {
  bool small;
  std::set<Block*, BlockOrder> free_blocks;
};
// LITERALINCLUDE END: ALLOCATOR_POOL

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
  std::vector<Stream> used_on;      // streams added by recordStream
  std::vector<orEvent_t> pending;   // must complete before the block is free
  bool stashed = false;             // freed, waiting in recent_ (see free_block)

  bool is_split() const { return prev != nullptr || next != nullptr; }
};
// LITERALINCLUDE END: ALLOCATOR_BLOCK

// LITERALINCLUDE START: ALLOCATOR_ADDRESS_ORDER
struct AddressOrder {
  bool operator()(const Block* a, const Block* b) const { return a->ptr < b->ptr; }
};
// LITERALINCLUDE END: ALLOCATOR_ADDRESS_ORDER

bool BlockOrder::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream) return a->stream < b->stream;
  if (a->size != b->size) return a->size < b->size;
  return a->ptr < b->ptr;
}

// LITERALINCLUDE START: ALLOCATOR_SIZE_KEY
struct SizeKey {
  StreamId stream;
  size_t size;
  bool operator==(const SizeKey& o) const { return stream == o.stream && size == o.size; }
};
// LITERALINCLUDE END: ALLOCATOR_SIZE_KEY
// LITERALINCLUDE START: ALLOCATOR_DEF_SIZE_KEY_HASH
struct SizeKeyHash {
  size_t operator()(const SizeKey& k) const { return std::hash<size_t>()(k.size) ^ (k.stream * 0x9E3779B97F4A7C15ull); }
};
// LITERALINCLUDE END: ALLOCATOR_DEF_SIZE_KEY_HASH

// LITERALINCLUDE START: ALLOCATOR_CACHING_DISABLED
bool caching_disabled() {
  static const bool disabled = c10::openreg::env_flag("OPENREG_NO_MEMORY_CACHING");
  return disabled;
}
// LITERALINCLUDE END: ALLOCATOR_CACHING_DISABLED

// LITERALINCLUDE START: ALLOCATOR_UPDATE
void update(StatArray& stat, bool small, int64_t amount) {
  for (auto type : {StatType::AGGREGATE, small ? StatType::SMALL_POOL : StatType::LARGE_POOL}) {
    Stat& s = stat[static_cast<size_t>(type)];
    amount >= 0 ? s.increase(static_cast<size_t>(amount)) : s.decrease(static_cast<size_t>(-amount));
  }
}
// LITERALINCLUDE END: ALLOCATOR_UPDATE

// LITERALINCLUDE START: ALLOCATOR_FOR_EACH_STAT
template <class F>
void for_each_stat(CachingDeviceAllocator::DeviceStats& stats, F f) {
  for (auto* array : {&stats.allocation, &stats.segment, &stats.active, &stats.inactive_split,
                      &stats.allocated_bytes, &stats.reserved_bytes, &stats.active_bytes,
                      &stats.inactive_split_bytes, &stats.requested_bytes}) {
    for (Stat& stat : *array) f(stat);
  }
}
// LITERALINCLUDE END: ALLOCATOR_FOR_EACH_STAT

// LITERALINCLUDE START: ALLOCATOR_IS_FREE
bool is_free(const Block* b) { return b != nullptr && !b->allocated && b->pending.empty(); }
// LITERALINCLUDE END: ALLOCATOR_IS_FREE

// LITERALINCLUDE START: ALLOCATOR_GRAPH_POOL_KEY
// Pool keys are negative: stream ids are not.
StreamId pool_key(MempoolId_t pool) { return -static_cast<StreamId>(pool.first); }
// LITERALINCLUDE END: ALLOCATOR_GRAPH_POOL_KEY

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
  size_t limit_ = SIZE_MAX;                  // from the memory fraction
  double fraction_ = 1.0;
  std::deque<TraceEntry> trace_;
  size_t trace_max_ = 0;                     // 0: history off
  StreamId capturing_stream_ = -1;           // the stream whose allocations go to a pool
  StreamId pool_key_ = 0;                    // the pool's key, in place of a stream id
};
// LITERALINCLUDE END: ALLOCATOR_PER_DEVICE_CLASS

// LITERALINCLUDE START: ALLOCATOR_PER_DEVICE_LOOKUP
// The one way to a device's allocator: the index is checked here, so no
// caller can reach past the end of the table.
DeviceCachingAllocator& device_caching_allocator(DeviceIndex device) {
  static const auto* all = [] {
    auto* v = new std::vector<DeviceCachingAllocator*>();  // leaked: blocks may be freed at exit
    for (DeviceIndex i = 0; i < device_count(); ++i) v->push_back(new DeviceCachingAllocator(i));
    return v;
  }();
  check_device_index(device);
  return *(*all)[device];
}
// LITERALINCLUDE END: ALLOCATOR_PER_DEVICE_LOOKUP

// profile_memory=True: PyTorch's profiler sees each allocation and free (a free
// is reported when requested, before the statistics drop by `size`).
void DeviceCachingAllocator::report_to_profiler(const char* action, const void* address,
                                                size_t size) {
  if (!c10::memoryProfilingEnabled()) return;
  bool alloc = std::strcmp(action, "alloc") == 0;
  if (!alloc && std::strcmp(action, "free_requested") != 0) return;
  auto total = [](const StatArray& s) { return s[static_cast<size_t>(StatType::AGGREGATE)].current; };
  int64_t delta = alloc ? static_cast<int64_t>(size) : -static_cast<int64_t>(size);
  c10::reportMemoryUsageToProfiler(const_cast<void*>(address), delta,
                                   total(stats_.allocated_bytes) + (alloc ? 0 : delta),
                                   total(stats_.reserved_bytes), Device(DeviceType::PrivateUse1, device_));
}

void DeviceCachingAllocator::record(const char* action, const void* address, size_t size,
                                    StreamId stream) {
  report_to_profiler(action, address, size);
  if (trace_max_ == 0) return;
  if (trace_.size() == trace_max_) trace_.pop_front();
  trace_.push_back({action, reinterpret_cast<size_t>(address), size, stream, now_us()});
}

// LITERALINCLUDE START: ALLOCATOR_FREE_SET_BOOKKEEPING
// A free block enters or leaves its pool; a free piece of a split segment is
// what PyTorch calls an inactive split.
void DeviceCachingAllocator::insert_free(Block* b) {
  b->pool->free_blocks.insert(b);
  if (b->is_split()) {
    update(stats_.inactive_split, b->pool->small, 1);
    update(stats_.inactive_split_bytes, b->pool->small, static_cast<int64_t>(b->size));
  }
}

void DeviceCachingAllocator::remove_free(Block* b) {
  b->pool->free_blocks.erase(b);
  if (b->is_split()) {
    update(stats_.inactive_split, b->pool->small, -1);
    update(stats_.inactive_split_bytes, b->pool->small, -static_cast<int64_t>(b->size));
  }
}

size_t DeviceCachingAllocator::reserved() const {
  return static_cast<size_t>(stats_.reserved_bytes[static_cast<size_t>(StatType::AGGREGATE)].current);
}

void DeviceCachingAllocator::release_segment(Block* b) {
  remove_free(b);
  segments_.erase(b);
  OPENREG_CHECK(orFree(b->ptr));
  update(stats_.segment, b->pool->small, -1);
  update(stats_.reserved_bytes, b->pool->small, -static_cast<int64_t>(b->size));
  stats_.num_device_free++;
  record("segment_free", b->ptr, b->size, b->stream);
  delete b;
}

// Returns every entirely free segment to the driver.
void DeviceCachingAllocator::release_cached() {
  merge_recent();
  c10::DeviceGuard guard(Device(DeviceType::PrivateUse1, device_));
  for (Pool* pool : {&small_, &large_}) {
    for (auto it = pool->free_blocks.begin(); it != pool->free_blocks.end();) {
      Block* b = *it++;
      if (!b->is_split()) release_segment(b);
    }
  }
}
// LITERALINCLUDE END: ALLOCATOR_FREE_SET_BOOKKEEPING

// LITERALINCLUDE START: ALLOCATOR_FREE_AND_MERGE
// Puts a free block back in its pool, merged with free neighbours, so that
// fragments become whole segments again.
void DeviceCachingAllocator::merge_into_pool(Block* b) {
  for (Block* neighbour : {b->prev, b->next}) {
    if (!is_free(neighbour) || neighbour->stashed) continue;
    remove_free(neighbour);
    if (neighbour == b->prev) {
      bool neighbour_was_head = neighbour->prev == nullptr;
      if (neighbour_was_head) segments_.erase(neighbour);
      b->ptr = neighbour->ptr;
      b->prev = neighbour->prev;
      if (b->prev) b->prev->next = b;
      if (neighbour_was_head) segments_.insert(b);
    } else {
      b->next = neighbour->next;
      if (b->next) b->next->prev = b;
    }
    b->size += neighbour->size;
    delete neighbour;
  }
  insert_free(b);
  if (caching_disabled() && !b->is_split()) {
    c10::DeviceGuard guard(Device(DeviceType::PrivateUse1, device_));
    release_segment(b);
  }
}

// Merging costs set updates and heap traffic; it waits until an allocation
// misses the recent blocks, or a snapshot or empty_cache needs the real state.
void DeviceCachingAllocator::merge_recent() {
  if (recent_count_ == 0) return;
  for (auto& [key, blocks] : recent_) {
    for (Block* b : blocks) {
      b->stashed = false;
      merge_into_pool(b);
    }
    blocks.clear();
  }
  recent_count_ = 0;
}

// A block is no longer in use by any stream.
void DeviceCachingAllocator::free_block(Block* b) {
  record("free_completed", b->ptr, b->size, b->stream);
  update(stats_.active, b->pool->small, -1);
  update(stats_.active_bytes, b->pool->small, -static_cast<int64_t>(b->size));
  if (caching_disabled()) {
    merge_into_pool(b);
    return;
  }
  b->stashed = true;
  recent_[{b->stream, b->size}].push_back(b);
  recent_count_++;
}
// LITERALINCLUDE END: ALLOCATOR_FREE_AND_MERGE

// LITERALINCLUDE START: ALLOCATOR_COLLECT_WAITING
// Blocks whose cross-stream events completed become free.
void DeviceCachingAllocator::collect_waiting() {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    Block* b = *it;
    bool done = true;
    for (orEvent_t e : b->pending) done = done && orEventQuery(e) == orSuccess;
    if (!done) {
      ++it;
      continue;
    }
    for (orEvent_t e : b->pending) orEventDestroy(e);
    b->pending.clear();
    it = waiting_.erase(it);
    free_block(b);
  }
}
// LITERALINCLUDE END: ALLOCATOR_COLLECT_WAITING

// LITERALINCLUDE START: ALLOCATOR_DELETER
void delete_block(void* ctx) {
  if (ctx == nullptr) return;  // zero-size allocation
  auto* b = static_cast<Block*>(ctx);
  device_caching_allocator(b->device).free(b);
}

void DeviceCachingAllocator::free(Block* b) {
  std::lock_guard<std::mutex> lock(mu_);
  record("free_requested", b->ptr, b->size, b->stream);
  b->allocated = false;
  update(stats_.allocation, b->pool->small, -1);
  update(stats_.allocated_bytes, b->pool->small, -static_cast<int64_t>(b->size));
  update(stats_.requested_bytes, b->pool->small, -static_cast<int64_t>(b->requested));
  if (b->used_on.empty()) {
    free_block(b);
    return;
  }
  // Used on other streams: free once the work they have queued so far is done.
  c10::DeviceGuard guard(Device(DeviceType::PrivateUse1, device_));
  for (const Stream& s : b->used_on) {
    orEvent_t e;
    OPENREG_CHECK(orEventCreateWithFlags(&e, orEventDisableTiming));
    OPENREG_CHECK(orEventRecord(e, OpenRegStream(s).stream()));
    b->pending.push_back(e);
  }
  b->used_on.clear();
  waiting_.push_back(b);
}
// LITERALINCLUDE END: ALLOCATOR_DELETER

// LITERALINCLUDE START: ALLOCATOR_NEW_SEGMENT
void DeviceCachingAllocator::out_of_memory(size_t nbytes, const char* why) {
  stats_.num_ooms++;
  record("oom", nullptr, nbytes, 0);
  size_t free_bytes = 0, total = 0;
  orMemGetInfo(&free_bytes, &total);
  auto current = [](const StatArray& s) {
    return static_cast<uint64_t>(s[static_cast<size_t>(StatType::AGGREGATE)].current);
  };
  TORCH_CHECK_WITH(OutOfMemoryError, false, "OpenReg out of memory. Tried to allocate ",
                   format_size(nbytes), " (device ", int(device_), "; ", format_size(total),
                   " total capacity; ", format_size(free_bytes), " free; ",
                   format_size(current(stats_.allocated_bytes)), " allocated by PyTorch; ",
                   format_size(current(stats_.reserved_bytes)), " reserved by PyTorch)", why);
}

// A new segment from the driver, within the memory fraction.
Block* DeviceCachingAllocator::new_segment(size_t size, size_t nbytes, StreamId stream, Pool* pool) {
  if (reserved() + size > limit_) {
    release_cached();
    // Under a cap, settle for the smallest segment that holds the request.
    size_t smallest = pool->small ? kSmallSegment : (nbytes + kLargeRound - 1) / kLargeRound * kLargeRound;
    size = std::min(size, smallest);
    if (reserved() + size > limit_) {
      std::ostringstream why;
      why << ". The allowed memory fraction " << fraction_ << " caps this process at "
          << format_size(limit_);
      out_of_memory(nbytes, why.str().c_str());
    }
  }
  void* ptr = nullptr;
  orError_t err = orMalloc(&ptr, size);
  if (err == orErrorMemoryAllocation) {  // give the cache back and try once more
    stats_.num_alloc_retries++;
    release_cached();
    err = orMalloc(&ptr, size);
  }
  if (err == orErrorMemoryAllocation) out_of_memory(nbytes, "");
  OPENREG_CHECK(err);
  auto* b = new Block{device_, stream, pool, static_cast<char*>(ptr), size};
  segments_.insert(b);
  update(stats_.segment, pool->small, 1);
  update(stats_.reserved_bytes, pool->small, static_cast<int64_t>(size));
  stats_.num_device_alloc++;
  record("segment_alloc", ptr, size, stream);
  return b;
}
// LITERALINCLUDE END: ALLOCATOR_NEW_SEGMENT

// LITERALINCLUDE START: ALLOCATOR_SPLIT
// Cuts `size` bytes off the front of free block `b`; the rest stays free.
void DeviceCachingAllocator::split(Block* b, size_t size) {
  size_t rest = b->size - size;
  bool worth_it = b->pool->small ? rest >= kMinBlock : rest > kSmallSize;
  if (!worth_it) return;
  auto* tail = new Block{b->device, b->stream, b->pool, b->ptr + size, rest};
  tail->prev = b;
  tail->next = b->next;
  if (tail->next) tail->next->prev = tail;
  b->next = tail;
  b->size = size;
  insert_free(tail);
}
// LITERALINCLUDE END: ALLOCATOR_SPLIT

// LITERALINCLUDE START: ALLOCATOR_MALLOC
Block* DeviceCachingAllocator::malloc(size_t nbytes, StreamId stream) {
  size_t size = round_size(nbytes);
  std::lock_guard<std::mutex> lock(mu_);
  collect_waiting();
  if (stream == capturing_stream_) stream = pool_key_;  // a graph's private pool

  // Only blocks freed on this stream are candidates: work queued on the same
  // stream runs after every earlier use of the block. First a recently freed
  // block of exactly this size, then the best fit after merging.
  Pool* pool = size <= kSmallSize ? &small_ : &large_;
  Block* b = nullptr;
  auto recent = recent_.find({stream, size});
  if (recent != recent_.end() && !recent->second.empty()) {
    b = recent->second.back();
    recent->second.pop_back();
    b->stashed = false;
    recent_count_--;
  } else {
    merge_recent();
    Block key{device_, stream, pool, nullptr, size};
    auto it = pool->free_blocks.lower_bound(&key);
    if (it != pool->free_blocks.end() && (*it)->stream == stream) {
      b = *it;
      remove_free(b);
    } else {
      b = new_segment(segment_size(size), nbytes, stream, pool);
    }
    split(b, size);
  }

  b->allocated = true;
  b->requested = nbytes;
  update(stats_.allocation, pool->small, 1);
  update(stats_.allocated_bytes, pool->small, static_cast<int64_t>(b->size));
  update(stats_.active, pool->small, 1);
  update(stats_.active_bytes, pool->small, static_cast<int64_t>(b->size));
  update(stats_.requested_bytes, pool->small, static_cast<int64_t>(nbytes));
  record("alloc", b->ptr, b->size, stream);
  return b;
}
// LITERALINCLUDE END: ALLOCATOR_MALLOC

void DeviceCachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  collect_waiting();
  release_cached();
}

// LITERALINCLUDE START: ALLOCATOR_RECORD_STREAM_BLOCK
void DeviceCachingAllocator::record_stream(Block* b, const Stream& stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stream.id() == b->stream) return;  // its own stream orders itself
  for (const Stream& s : b->used_on) {
    if (s == stream) return;
  }
  b->used_on.push_back(stream);
}
// LITERALINCLUDE END: ALLOCATOR_RECORD_STREAM_BLOCK

// LITERALINCLUDE START: ALLOCATOR_PER_DEVICE_STATS
CachingDeviceAllocator::DeviceStats DeviceCachingAllocator::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void DeviceCachingAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(mu_);
  for_each_stat(stats_, [](Stat& s) { s.reset_accumulated(); });
  stats_.num_alloc_retries = 0;
  stats_.num_ooms = 0;
  stats_.num_device_alloc = 0;
  stats_.num_device_free = 0;
}

void DeviceCachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mu_);
  for_each_stat(stats_, [](Stat& s) { s.reset_peak(); });
}

void DeviceCachingAllocator::set_memory_fraction(double fraction, size_t total) {
  std::lock_guard<std::mutex> lock(mu_);
  fraction_ = fraction;
  limit_ = static_cast<size_t>(fraction * static_cast<double>(total));
}

double DeviceCachingAllocator::memory_fraction() {
  std::lock_guard<std::mutex> lock(mu_);
  return fraction_;
}

void DeviceCachingAllocator::record_history(bool enabled, size_t max_entries) {
  std::lock_guard<std::mutex> lock(mu_);
  trace_max_ = enabled ? std::max<size_t>(max_entries, 1) : 0;
  if (!enabled) trace_.clear();
}

void DeviceCachingAllocator::snapshot(AllocatorSnapshot& out) {
  std::lock_guard<std::mutex> lock(mu_);
  merge_recent();
  for (Block* head : segments_) {
    SegmentSnapshot seg{device_, reinterpret_cast<size_t>(head->ptr), 0, 0, 0, 0,
                        head->stream, !head->pool->small, {}};
    for (Block* b = head; b != nullptr; b = b->next) {
      const char* state = b->allocated ? "active_allocated"
                          : !b->pending.empty() ? "active_pending_free"
                                                : "inactive";
      seg.blocks.push_back({reinterpret_cast<size_t>(b->ptr), b->size,
                            b->allocated ? b->requested : 0, state});
      seg.total_size += b->size;
      if (b->allocated) {
        seg.allocated_size += b->size;
        seg.requested_size += b->requested;
      }
      if (b->allocated || !b->pending.empty()) seg.active_size += b->size;
    }
    out.segments.push_back(std::move(seg));
  }
  out.device_traces.emplace_back(trace_.begin(), trace_.end());
}

// LITERALINCLUDE END: ALLOCATOR_PER_DEVICE_STATS

// LITERALINCLUDE START: ALLOCATOR_PER_DEVICE_POOLS
void DeviceCachingAllocator::begin_allocate_to_pool(StreamId stream, StreamId key) {
  std::lock_guard<std::mutex> lock(mu_);
  TORCH_CHECK(capturing_stream_ < 0, "openreg device ", int(device_), " is already capturing");
  capturing_stream_ = stream;
  pool_key_ = key;
}

void DeviceCachingAllocator::end_allocate_to_pool() {
  std::lock_guard<std::mutex> lock(mu_);
  capturing_stream_ = -1;
}

void DeviceCachingAllocator::release_pool(StreamId key) {
  std::lock_guard<std::mutex> lock(mu_);
  merge_recent();
  c10::DeviceGuard guard(Device(DeviceType::PrivateUse1, device_));
  for (Pool* p : {&small_, &large_}) {
    for (auto it = p->free_blocks.begin(); it != p->free_blocks.end();) {
      Block* b = *it++;
      if (b->stream == key && !b->is_split()) release_segment(b);
    }
  }
}
// LITERALINCLUDE END: ALLOCATOR_PER_DEVICE_POOLS
}  // namespace

// LITERALINCLUDE START: ALLOCATOR_ALLOCATE
DataPtr OpenRegDeviceAllocator::allocate(size_t nbytes) {
  DeviceIndex device = current_device();
  if (nbytes == 0) return {nullptr, nullptr, &delete_block, Device(DeviceType::PrivateUse1, device)};
  StreamId stream = getCurrentOpenRegStream(device).id();
  Block* b = device_caching_allocator(device).malloc(nbytes, stream);
  return {b->ptr, b, &delete_block, Device(DeviceType::PrivateUse1, device)};
}
// LITERALINCLUDE END: ALLOCATOR_ALLOCATE

// LITERALINCLUDE START: ALLOCATOR_FRONT_METHODS
DeleterFnPtr OpenRegDeviceAllocator::raw_deleter() const { return &delete_block; }

void OpenRegDeviceAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  OPENREG_CHECK(orMemcpy(dest, src, count, orMemcpyDeviceToDevice));
}

void OpenRegDeviceAllocator::emptyCache(MempoolId_t) {
  for (DeviceIndex i = 0; i < device_count(); ++i) device_caching_allocator(i).empty_cache();
}
// LITERALINCLUDE END: ALLOCATOR_FRONT_METHODS

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

// LITERALINCLUDE START: ALLOCATOR_FRONT_FORWARDS
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
// LITERALINCLUDE END: ALLOCATOR_FRONT_FORWARDS

// LITERALINCLUDE START: ALLOCATOR_REGISTER
OpenRegDeviceAllocator* device_allocator() {
  static OpenRegDeviceAllocator allocator;
  return &allocator;
}

REGISTER_ALLOCATOR(DeviceType::PrivateUse1, device_allocator());
// LITERALINCLUDE END: ALLOCATOR_REGISTER

}  // namespace c10::openreg

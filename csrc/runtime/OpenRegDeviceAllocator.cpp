// OpenRegDeviceAllocator.cpp: segments, block splitting and merging, stream-ordered reuse, stats.
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

namespace c10::openreg {

namespace {
using c10::CachingAllocator::Stat;
using c10::CachingAllocator::StatArray;
using c10::CachingAllocator::StatType;

constexpr size_t kMinBlock = 512;              // every block is a multiple of this
constexpr size_t kSmallSize = 1 << 20;         // requests up to 1 MiB share small segments
constexpr size_t kSmallSegment = 2 << 20;      // small segments are 2 MiB
constexpr size_t kMinLargeSegment = 20 << 20;  // requests of 1-10 MiB share 20 MiB segments
constexpr size_t kLargeRound = 2 << 20;        // larger requests get their own, 2 MiB rounded

size_t round_size(size_t n) { return n < kMinBlock ? kMinBlock : (n + kMinBlock - 1) / kMinBlock * kMinBlock; }

size_t segment_size(size_t rounded) {
  if (rounded <= kSmallSize) return kSmallSegment;
  if (rounded < kMinLargeSegment / 2) return kMinLargeSegment;
  return (rounded + kLargeRound - 1) / kLargeRound * kLargeRound;
}

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

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Block;

struct BlockOrder {  // best fit: same stream, smallest size, lowest address
  bool operator()(const Block* a, const Block* b) const;
};

struct Pool {
  bool small;
  std::set<Block*, BlockOrder> free_blocks;
};

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
  bool stashed = false;             // freed, waiting in DeviceState::recent

  bool is_split() const { return prev != nullptr || next != nullptr; }
};

struct AddressOrder {
  bool operator()(const Block* a, const Block* b) const { return a->ptr < b->ptr; }
};

bool BlockOrder::operator()(const Block* a, const Block* b) const {
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
  size_t operator()(const SizeKey& k) const { return std::hash<size_t>()(k.size) ^ (k.stream * 0x9E3779B97F4A7C15ull); }
};

struct DeviceState {
  DeviceIndex device;
  std::mutex mu;
  // Freed blocks not merged yet, by (stream, size): a request of the same size
  // takes one back without splitting or merging anything.
  std::unordered_map<SizeKey, std::vector<Block*>, SizeKeyHash> recent;
  size_t recent_count = 0;
  Pool small{true, {}};
  Pool large{false, {}};
  std::set<Block*, AddressOrder> segments;  // the first block of every segment
  std::deque<Block*> waiting;         // freed, waiting for other streams' events
  CachingDeviceAllocator::DeviceStats stats;
  size_t limit = SIZE_MAX;            // from the memory fraction
  double fraction = 1.0;
  std::deque<TraceEntry> trace;
  size_t trace_max = 0;               // 0: history off
  StreamId capturing_stream = -1;     // the stream whose allocations go to a pool
  StreamId pool_key = 0;              // the pool's key, in place of a stream id

  // profile_memory=True: PyTorch's profiler sees each allocation and free
  // (a free is reported when requested, before the stats drop by `size`).
  void report_to_profiler(const char* action, const void* address, size_t size) {
    if (!c10::memoryProfilingEnabled()) return;
    bool alloc = std::strcmp(action, "alloc") == 0;
    if (!alloc && std::strcmp(action, "free_requested") != 0) return;
    auto total = [](const StatArray& s) { return s[static_cast<size_t>(StatType::AGGREGATE)].current; };
    int64_t delta = alloc ? static_cast<int64_t>(size) : -static_cast<int64_t>(size);
    c10::reportMemoryUsageToProfiler(const_cast<void*>(address), delta,
                                     total(stats.allocated_bytes) + (alloc ? 0 : delta),
                                     total(stats.reserved_bytes), Device(DeviceType::PrivateUse1, device));
  }

  void record(const char* action, const void* address, size_t size, StreamId stream) {
    report_to_profiler(action, address, size);
    if (trace_max == 0) return;
    if (trace.size() == trace_max) trace.pop_front();
    trace.push_back({action, reinterpret_cast<size_t>(address), size, stream, now_us()});
  }
};

bool caching_disabled() {
  static const bool disabled = c10::openreg::env_flag("OPENREG_NO_MEMORY_CACHING");
  return disabled;
}

std::vector<DeviceState*>& states() {
  static auto* all = [] {
    auto* v = new std::vector<DeviceState*>();  // leaked: blocks may be freed at exit
    for (DeviceIndex i = 0; i < device_count(); ++i) {
      v->push_back(new DeviceState());
      v->back()->device = i;
    }
    return v;
  }();
  return *all;
}

void update(StatArray& stat, bool small, int64_t amount) {
  for (auto type : {StatType::AGGREGATE, small ? StatType::SMALL_POOL : StatType::LARGE_POOL}) {
    Stat& s = stat[static_cast<size_t>(type)];
    amount >= 0 ? s.increase(static_cast<size_t>(amount)) : s.decrease(static_cast<size_t>(-amount));
  }
}

template <class F>
void for_each_stat(CachingDeviceAllocator::DeviceStats& stats, F f) {
  for (auto* array : {&stats.allocation, &stats.segment, &stats.active, &stats.inactive_split,
                      &stats.allocated_bytes, &stats.reserved_bytes, &stats.active_bytes,
                      &stats.inactive_split_bytes, &stats.requested_bytes}) {
    for (Stat& stat : *array) f(stat);
  }
}

// A free block enters or leaves its pool; a free piece of a split segment is
// what PyTorch calls an inactive split.
void insert_free(DeviceState& d, Block* b) {
  b->pool->free_blocks.insert(b);
  if (b->is_split()) {
    update(d.stats.inactive_split, b->pool->small, 1);
    update(d.stats.inactive_split_bytes, b->pool->small, static_cast<int64_t>(b->size));
  }
}

void remove_free(DeviceState& d, Block* b) {
  b->pool->free_blocks.erase(b);
  if (b->is_split()) {
    update(d.stats.inactive_split, b->pool->small, -1);
    update(d.stats.inactive_split_bytes, b->pool->small, -static_cast<int64_t>(b->size));
  }
}

bool is_free(const Block* b) { return b != nullptr && !b->allocated && b->pending.empty(); }

size_t reserved(const DeviceState& d) {
  return static_cast<size_t>(d.stats.reserved_bytes[static_cast<size_t>(StatType::AGGREGATE)].current);
}

void release_segment(DeviceState& d, Block* b) {
  remove_free(d, b);
  d.segments.erase(b);
  OPENREG_CHECK(orFree(b->ptr));
  update(d.stats.segment, b->pool->small, -1);
  update(d.stats.reserved_bytes, b->pool->small, -static_cast<int64_t>(b->size));
  d.stats.num_device_free++;
  d.record("segment_free", b->ptr, b->size, b->stream);
  delete b;
}

void merge_recent(DeviceState& d);

// Returns every entirely free segment to the driver. Caller holds d.mu.
void release_cached(DeviceState& d) {
  merge_recent(d);
  c10::DeviceGuard guard(Device(DeviceType::PrivateUse1, d.device));
  for (Pool* pool : {&d.small, &d.large}) {
    for (auto it = pool->free_blocks.begin(); it != pool->free_blocks.end();) {
      Block* b = *it++;
      if (!b->is_split()) release_segment(d, b);
    }
  }
}

// LITERALINCLUDE START: ALLOCATOR_FREE_AND_MERGE
// Puts a free block back in its pool, merged with free neighbours, so that
// fragments become whole segments again.
void merge_into_pool(DeviceState& d, Block* b) {
  for (Block* neighbour : {b->prev, b->next}) {
    if (!is_free(neighbour) || neighbour->stashed) continue;
    remove_free(d, neighbour);
    if (neighbour == b->prev) {
      bool neighbour_was_head = neighbour->prev == nullptr;
      if (neighbour_was_head) d.segments.erase(neighbour);
      b->ptr = neighbour->ptr;
      b->prev = neighbour->prev;
      if (b->prev) b->prev->next = b;
      if (neighbour_was_head) d.segments.insert(b);
    } else {
      b->next = neighbour->next;
      if (b->next) b->next->prev = b;
    }
    b->size += neighbour->size;
    delete neighbour;
  }
  insert_free(d, b);
  if (caching_disabled() && !b->is_split()) {
    c10::DeviceGuard guard(Device(DeviceType::PrivateUse1, d.device));
    release_segment(d, b);
  }
}

// Merging costs set updates and heap traffic; it waits until an allocation
// misses the recent blocks, or a snapshot or empty_cache needs the real state.
void merge_recent(DeviceState& d) {
  if (d.recent_count == 0) return;
  for (auto& [key, blocks] : d.recent) {
    for (Block* b : blocks) {
      b->stashed = false;
      merge_into_pool(d, b);
    }
    blocks.clear();
  }
  d.recent_count = 0;
}

// A block is no longer in use by any stream.
void free_block(DeviceState& d, Block* b) {
  d.record("free_completed", b->ptr, b->size, b->stream);
  update(d.stats.active, b->pool->small, -1);
  update(d.stats.active_bytes, b->pool->small, -static_cast<int64_t>(b->size));
  if (caching_disabled()) {
    merge_into_pool(d, b);
    return;
  }
  b->stashed = true;
  d.recent[{b->stream, b->size}].push_back(b);
  d.recent_count++;
}
// LITERALINCLUDE END: ALLOCATOR_FREE_AND_MERGE

// Blocks whose cross-stream events completed become free.
void collect_waiting(DeviceState& d) {
  for (auto it = d.waiting.begin(); it != d.waiting.end();) {
    Block* b = *it;
    bool done = true;
    for (orEvent_t e : b->pending) done = done && orEventQuery(e) == orSuccess;
    if (!done) {
      ++it;
      continue;
    }
    for (orEvent_t e : b->pending) orEventDestroy(e);
    b->pending.clear();
    it = d.waiting.erase(it);
    free_block(d, b);
  }
}

// LITERALINCLUDE START: ALLOCATOR_DELETER
void delete_block(void* ctx) {
  if (ctx == nullptr) return;  // zero-size allocation
  auto* b = static_cast<Block*>(ctx);
  DeviceState& d = *states()[b->device];
  std::lock_guard<std::mutex> lock(d.mu);
  d.record("free_requested", b->ptr, b->size, b->stream);
  b->allocated = false;
  update(d.stats.allocation, b->pool->small, -1);
  update(d.stats.allocated_bytes, b->pool->small, -static_cast<int64_t>(b->size));
  update(d.stats.requested_bytes, b->pool->small, -static_cast<int64_t>(b->requested));
  if (b->used_on.empty()) {
    free_block(d, b);
    return;
  }
  // Used on other streams: free once the work they have queued so far is done.
  c10::DeviceGuard guard(Device(DeviceType::PrivateUse1, b->device));
  for (const Stream& s : b->used_on) {
    orEvent_t e;
    OPENREG_CHECK(orEventCreateWithFlags(&e, orEventDisableTiming));
    OPENREG_CHECK(orEventRecord(e, OpenRegStream(s).stream()));
    b->pending.push_back(e);
  }
  b->used_on.clear();
  d.waiting.push_back(b);
}
// LITERALINCLUDE END: ALLOCATOR_DELETER

[[noreturn]] void out_of_memory(DeviceState& d, size_t nbytes, const char* why) {
  d.stats.num_ooms++;
  d.record("oom", nullptr, nbytes, 0);
  size_t free_bytes = 0, total = 0;
  orMemGetInfo(&free_bytes, &total);
  auto current = [](const StatArray& s) {
    return static_cast<uint64_t>(s[static_cast<size_t>(StatType::AGGREGATE)].current);
  };
  TORCH_CHECK_WITH(OutOfMemoryError, false, "OpenReg out of memory. Tried to allocate ",
                   format_size(nbytes), " (device ", int(d.device), "; ", format_size(total),
                   " total capacity; ", format_size(free_bytes), " free; ",
                   format_size(current(d.stats.allocated_bytes)), " allocated by PyTorch; ",
                   format_size(current(d.stats.reserved_bytes)), " reserved by PyTorch)", why);
}

// A new segment from the driver, within the memory fraction. Caller holds d.mu.
Block* new_segment(DeviceState& d, size_t size, size_t nbytes, StreamId stream, Pool* pool) {
  if (reserved(d) + size > d.limit) {
    release_cached(d);
    // Under a cap, settle for the smallest segment that holds the request.
    size_t smallest = pool->small ? kSmallSegment : (nbytes + kLargeRound - 1) / kLargeRound * kLargeRound;
    size = std::min(size, smallest);
    if (reserved(d) + size > d.limit) {
      std::ostringstream why;
      why << ". The allowed memory fraction " << d.fraction << " caps this process at "
          << format_size(d.limit);
      out_of_memory(d, nbytes, why.str().c_str());
    }
  }
  void* ptr = nullptr;
  orError_t err = orMalloc(&ptr, size);
  if (err == orErrorMemoryAllocation) {  // give the cache back and try once more
    d.stats.num_alloc_retries++;
    release_cached(d);
    err = orMalloc(&ptr, size);
  }
  if (err == orErrorMemoryAllocation) out_of_memory(d, nbytes, "");
  OPENREG_CHECK(err);
  auto* b = new Block{d.device, stream, pool, static_cast<char*>(ptr), size};
  d.segments.insert(b);
  update(d.stats.segment, pool->small, 1);
  update(d.stats.reserved_bytes, pool->small, static_cast<int64_t>(size));
  d.stats.num_device_alloc++;
  d.record("segment_alloc", ptr, size, stream);
  return b;
}

// LITERALINCLUDE START: ALLOCATOR_SPLIT
// Cuts `size` bytes off the front of free block `b`; the rest stays free.
void split(DeviceState& d, Block* b, size_t size) {
  size_t rest = b->size - size;
  bool worth_it = b->pool->small ? rest >= kMinBlock : rest > kSmallSize;
  if (!worth_it) return;
  auto* tail = new Block{b->device, b->stream, b->pool, b->ptr + size, rest};
  tail->prev = b;
  tail->next = b->next;
  if (tail->next) tail->next->prev = tail;
  b->next = tail;
  b->size = size;
  insert_free(d, tail);
}
// LITERALINCLUDE END: ALLOCATOR_SPLIT
}  // namespace

// LITERALINCLUDE START: ALLOCATOR_ALLOCATE
DataPtr OpenRegDeviceAllocator::allocate(size_t nbytes) {
  DeviceIndex device = current_device();
  if (nbytes == 0) return {nullptr, nullptr, &delete_block, Device(DeviceType::PrivateUse1, device)};
  size_t size = round_size(nbytes);
  StreamId stream = getCurrentOpenRegStream(device).id();
  DeviceState& d = *states()[device];
  std::lock_guard<std::mutex> lock(d.mu);
  collect_waiting(d);
  if (stream == d.capturing_stream) stream = d.pool_key;  // a graph's private pool

  // Only blocks freed on this stream are candidates: work queued on the same
  // stream runs after every earlier use of the block. First a recently freed
  // block of exactly this size, then the best fit after merging.
  Pool* pool = size <= kSmallSize ? &d.small : &d.large;
  Block* b = nullptr;
  auto recent = d.recent.find({stream, size});
  if (recent != d.recent.end() && !recent->second.empty()) {
    b = recent->second.back();
    recent->second.pop_back();
    b->stashed = false;
    d.recent_count--;
  } else {
    merge_recent(d);
    Block key{device, stream, pool, nullptr, size};
    auto it = pool->free_blocks.lower_bound(&key);
    if (it != pool->free_blocks.end() && (*it)->stream == stream) {
      b = *it;
      remove_free(d, b);
    } else {
      b = new_segment(d, segment_size(size), nbytes, stream, pool);
    }
    split(d, b, size);
  }

  b->allocated = true;
  b->requested = nbytes;
  update(d.stats.allocation, pool->small, 1);
  update(d.stats.allocated_bytes, pool->small, static_cast<int64_t>(b->size));
  update(d.stats.active, pool->small, 1);
  update(d.stats.active_bytes, pool->small, static_cast<int64_t>(b->size));
  update(d.stats.requested_bytes, pool->small, static_cast<int64_t>(nbytes));
  d.record("alloc", b->ptr, b->size, stream);
  return {b->ptr, b, &delete_block, Device(DeviceType::PrivateUse1, device)};
}
// LITERALINCLUDE END: ALLOCATOR_ALLOCATE

DeleterFnPtr OpenRegDeviceAllocator::raw_deleter() const { return &delete_block; }

void OpenRegDeviceAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  OPENREG_CHECK(orMemcpy(dest, src, count, orMemcpyDeviceToDevice));
}

void OpenRegDeviceAllocator::emptyCache(MempoolId_t) {
  for (DeviceState* d : states()) {
    std::lock_guard<std::mutex> lock(d->mu);
    collect_waiting(*d);
    release_cached(*d);
  }
}

// LITERALINCLUDE START: ALLOCATOR_RECORD_STREAM
void OpenRegDeviceAllocator::recordStream(const DataPtr& ptr, c10::Stream stream) {
  if (ptr.get() == nullptr) return;
  TORCH_CHECK(ptr.get_deleter() == &delete_block,
              "record_stream: the memory was not allocated by the openreg allocator");
  auto* b = static_cast<Block*>(ptr.get_context());
  DeviceState& d = *states()[b->device];
  std::lock_guard<std::mutex> lock(d.mu);
  if (stream.id() == b->stream) return;  // its own stream orders itself
  for (const Stream& s : b->used_on) {
    if (s == stream) return;
  }
  b->used_on.push_back(stream);
}
// LITERALINCLUDE END: ALLOCATOR_RECORD_STREAM

CachingDeviceAllocator::DeviceStats OpenRegDeviceAllocator::getDeviceStats(DeviceIndex device) {
  check_device_index(device);
  DeviceState& d = *states()[device];
  std::lock_guard<std::mutex> lock(d.mu);
  return d.stats;
}

void OpenRegDeviceAllocator::resetAccumulatedStats(DeviceIndex device) {
  check_device_index(device);
  DeviceState& d = *states()[device];
  std::lock_guard<std::mutex> lock(d.mu);
  for_each_stat(d.stats, [](Stat& s) { s.reset_accumulated(); });
  d.stats.num_alloc_retries = 0;
  d.stats.num_ooms = 0;
  d.stats.num_device_alloc = 0;
  d.stats.num_device_free = 0;
}

void OpenRegDeviceAllocator::resetPeakStats(DeviceIndex device) {
  check_device_index(device);
  DeviceState& d = *states()[device];
  std::lock_guard<std::mutex> lock(d.mu);
  for_each_stat(d.stats, [](Stat& s) { s.reset_peak(); });
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
  DeviceState& d = *states()[device];
  std::lock_guard<std::mutex> lock(d.mu);
  d.fraction = fraction;
  d.limit = static_cast<size_t>(fraction * static_cast<double>(total));
}

double OpenRegDeviceAllocator::getMemoryFraction(DeviceIndex device) {
  check_device_index(device);
  DeviceState& d = *states()[device];
  std::lock_guard<std::mutex> lock(d.mu);
  return d.fraction;
}

void OpenRegDeviceAllocator::recordHistory(bool enabled, size_t max_entries) {
  for (DeviceState* d : states()) {
    std::lock_guard<std::mutex> lock(d->mu);
    d->trace_max = enabled ? std::max<size_t>(max_entries, 1) : 0;
    if (!enabled) d->trace.clear();
  }
}

AllocatorSnapshot OpenRegDeviceAllocator::snapshot() {
  AllocatorSnapshot result;
  for (DeviceState* d : states()) {
    std::lock_guard<std::mutex> lock(d->mu);
    merge_recent(*d);
    for (Block* head : d->segments) {
      SegmentSnapshot seg{d->device, reinterpret_cast<size_t>(head->ptr), 0, 0, 0, 0,
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
      result.segments.push_back(std::move(seg));
    }
    result.device_traces.emplace_back(d->trace.begin(), d->trace.end());
  }
  return result;
}

namespace {
// Pool keys are negative: stream ids are not.
StreamId pool_key(MempoolId_t pool) { return -static_cast<StreamId>(pool.first); }
}  // namespace

void OpenRegDeviceAllocator::beginAllocateToPool(DeviceIndex device, MempoolId_t pool,
                                                 StreamId stream) {
  check_device_index(device);
  DeviceState& d = *states()[device];
  std::lock_guard<std::mutex> lock(d.mu);
  TORCH_CHECK(d.capturing_stream < 0, "openreg device ", int(device), " is already capturing");
  d.capturing_stream = stream;
  d.pool_key = pool_key(pool);
}

void OpenRegDeviceAllocator::endAllocateToPool(DeviceIndex device) {
  DeviceState& d = *states()[device];
  std::lock_guard<std::mutex> lock(d.mu);
  d.capturing_stream = -1;
}

void OpenRegDeviceAllocator::releasePool(DeviceIndex device, MempoolId_t pool) {
  DeviceState& d = *states()[device];
  std::lock_guard<std::mutex> lock(d.mu);
  merge_recent(d);
  StreamId key = pool_key(pool);
  c10::DeviceGuard guard(Device(DeviceType::PrivateUse1, d.device));
  for (Pool* p : {&d.small, &d.large}) {
    for (auto it = p->free_blocks.begin(); it != p->free_blocks.end();) {
      Block* b = *it++;
      if (b->stream == key && !b->is_split()) release_segment(d, b);
    }
  }
}

// LITERALINCLUDE START: ALLOCATOR_REGISTER
OpenRegDeviceAllocator* device_allocator() {
  static OpenRegDeviceAllocator allocator;
  return &allocator;
}

REGISTER_ALLOCATOR(DeviceType::PrivateUse1, device_allocator());
// LITERALINCLUDE END: ALLOCATOR_REGISTER

}  // namespace c10::openreg

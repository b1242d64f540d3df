// OpenRegCachingAllocator.cpp: how one device caches: segments from the driver, blocks split and merged, stream-ordered reuse.
#include "OpenRegCachingAllocator.h"

#include <c10/core/DeviceGuard.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

#include "OpenRegException.h"
#include "OpenRegStream.h"

namespace c10::openreg::caching {

namespace {
using c10::CachingAllocator::Stat;
using c10::CachingAllocator::StatArray;
using c10::CachingAllocator::StatType;

constexpr size_t kMinBlock = 512;              // every block is a multiple of this
constexpr size_t kSmallSize = 1 << 20;         // requests up to 1 MiB share small segments
constexpr size_t kSmallSegment = 2 << 20;      // small segments are 2 MiB
constexpr size_t kMinLargeSegment = 20 << 20;  // requests of 1-10 MiB share 20 MiB segments
constexpr size_t kLargeRound = 2 << 20;        // larger requests get their own, 2 MiB rounded

size_t round_size(size_t n) {
  return n < kMinBlock ? kMinBlock : (n + kMinBlock - 1) / kMinBlock * kMinBlock;
}

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

bool caching_disabled() {
  static const bool disabled = c10::openreg::env_flag("OPENREG_NO_MEMORY_CACHING");
  return disabled;
}

void update(StatArray& stat, bool small, int64_t amount) {
  for (auto type : {StatType::AGGREGATE, small ? StatType::SMALL_POOL : StatType::LARGE_POOL}) {
    Stat& s = stat[static_cast<size_t>(type)];
    amount >= 0 ? s.increase(static_cast<size_t>(amount))
                : s.decrease(static_cast<size_t>(-amount));
  }
}

bool is_free(const Block* b) { return b != nullptr && !b->allocated && b->pending.empty(); }
}  // namespace

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
  return static_cast<size_t>(
      stats_.reserved_bytes[static_cast<size_t>(StatType::AGGREGATE)].current);
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
Block* DeviceCachingAllocator::new_segment(size_t size, size_t nbytes, StreamId stream,
                                           Pool* pool) {
  if (reserved() + size > limit_) {
    release_cached();
    // Under a cap, settle for the smallest segment that holds the request.
    size_t smallest =
        pool->small ? kSmallSegment : (nbytes + kLargeRound - 1) / kLargeRound * kLargeRound;
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

}  // namespace c10::openreg::caching

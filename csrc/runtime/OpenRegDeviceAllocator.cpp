// OpenRegDeviceAllocator.cpp: size-rounded, stream-ordered caching over orMalloc/orFree.
#include "OpenRegDeviceAllocator.h"

#include <mutex>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "OpenRegException.h"
#include "OpenRegFunctions.h"
#include "OpenRegStream.h"

namespace c10::openreg {

namespace {
using c10::CachingAllocator::StatType;
constexpr size_t kMinBlock = 512;
constexpr size_t kSmallLimit = 1 << 20;
constexpr size_t kLargeRound = 2 << 20;

// Small requests round up to a power of two, large ones to 2 MiB, so freed
// blocks match later requests exactly.
size_t round_size(size_t n) {
  if (n <= kMinBlock) return kMinBlock;
  if (n <= kSmallLimit) {
    size_t r = kMinBlock;
    while (r < n) r <<= 1;
    return r;
  }
  return (n + kLargeRound - 1) / kLargeRound * kLargeRound;
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

// One device allocation. The tensor's DataPtr carries it as its context, so
// freeing and recordStream find it without a lookup.
struct Block {
  void* ptr = nullptr;
  size_t size = 0;
  DeviceIndex device = 0;
  StreamId stream = 0;                 // the stream it was allocated on
  std::vector<Stream> used_on;         // streams added by recordStream
  std::vector<orEvent_t> pending;      // events that must complete before reuse
};

struct DeviceState {
  std::mutex mu;
  // Free blocks by (stream, size); vectors keep their capacity, so a warm
  // cache allocates nothing on the host either.
  std::map<std::pair<StreamId, size_t>, std::vector<Block*>> cached;
  std::vector<Block*> waiting;  // freed, waiting for work on other streams
  CachingDeviceAllocator::DeviceStats stats;
};

std::vector<DeviceState*>& states() {
  static auto* all = [] {
    auto* v = new std::vector<DeviceState*>();  // leaked: blocks may be freed at exit
    for (DeviceIndex i = 0; i < device_count(); ++i) v->push_back(new DeviceState());
    return v;
  }();
  return *all;
}

void add_stat(c10::CachingAllocator::StatArray& a, size_t size, bool increase) {
  auto pool = size <= kSmallLimit ? StatType::SMALL_POOL : StatType::LARGE_POOL;
  for (auto t : {StatType::AGGREGATE, pool}) {
    auto& stat = a[static_cast<size_t>(t)];
    increase ? stat.increase(size) : stat.decrease(size);
  }
}

// Every statistic the allocator keeps, for the reset functions.
template <class F>
void for_each_stat(CachingDeviceAllocator::DeviceStats& stats, F f) {
  for (auto* array : {&stats.allocation, &stats.segment, &stats.active, &stats.allocated_bytes,
                      &stats.reserved_bytes, &stats.active_bytes, &stats.requested_bytes}) {
    for (auto& stat : *array) f(stat);
  }
}

void cache(DeviceState& d, Block* b) { d.cached[{b->stream, b->size}].push_back(b); }

// Blocks whose cross-stream events completed become reusable.
void collect_waiting(DeviceState& d) {
  if (d.waiting.empty()) return;
  std::erase_if(d.waiting, [&](Block* b) {
    for (orEvent_t e : b->pending) {
      if (orEventQuery(e) != orSuccess) return false;
    }
    for (orEvent_t e : b->pending) orEventDestroy(e);
    b->pending.clear();
    cache(d, b);
    return true;
  });
}

// Returns every cached block to the driver. Caller holds d.mu.
void release_cached(DeviceState& d, DeviceIndex device) {
  DeviceIndex previous = exchange_device(device);
  for (auto& [key, blocks] : d.cached) {
    for (Block* b : blocks) {
      OPENREG_CHECK(orFree(b->ptr));
      add_stat(d.stats.reserved_bytes, b->size, false);
      add_stat(d.stats.segment, 1, false);
      d.stats.num_device_free++;
      delete b;
    }
  }
  d.cached.clear();
  set_device(previous);
}

void delete_block(void* ctx) {
  if (ctx == nullptr) return;  // zero-size allocation
  auto* block = static_cast<Block*>(ctx);
  DeviceState& d = *states()[block->device];
  std::lock_guard<std::mutex> lock(d.mu);
  add_stat(d.stats.allocated_bytes, block->size, false);
  add_stat(d.stats.active_bytes, block->size, false);
  add_stat(d.stats.allocation, 1, false);
  add_stat(d.stats.active, 1, false);
  if (block->used_on.empty()) {
    cache(d, block);
    return;
  }
  // Used on other streams: reusable once their work queued so far has finished.
  DeviceIndex previous = exchange_device(block->device);
  for (const Stream& s : block->used_on) {
    orEvent_t e;
    OPENREG_CHECK(orEventCreateWithFlags(&e, orEventDisableTiming));
    OPENREG_CHECK(orEventRecord(e, OpenRegStream(s).stream()));
    block->pending.push_back(e);
  }
  set_device(previous);
  block->used_on.clear();
  d.waiting.push_back(block);
}
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

  Block* block = nullptr;
  auto hit = d.cached.find({stream, size});
  if (hit != d.cached.end() && !hit->second.empty()) {
    block = hit->second.back();  // freed on this stream: later work is ordered after its last use
    hit->second.pop_back();
  } else {
    void* ptr = nullptr;
    orError_t err = orMalloc(&ptr, size);
    if (err == orErrorMemoryAllocation) {  // give the cache back and try once more
      d.stats.num_alloc_retries++;
      release_cached(d, device);
      err = orMalloc(&ptr, size);
    }
    if (err == orErrorMemoryAllocation) {
      d.stats.num_ooms++;
      size_t free_bytes = 0, total = 0;
      orMemGetInfo(&free_bytes, &total);
      TORCH_CHECK_WITH(OutOfMemoryError, false, "OpenReg out of memory. Tried to allocate ",
                       format_size(nbytes), " (device ", int(device), "; ", format_size(total),
                       " total capacity; ", format_size(free_bytes), " free; ",
                       format_size(d.stats.allocated_bytes[0].current),
                       " allocated by PyTorch; ", format_size(d.stats.reserved_bytes[0].current),
                       " reserved by PyTorch)");
    }
    OPENREG_CHECK(err);
    block = new Block{ptr, size, device, stream, {}, {}};
    add_stat(d.stats.reserved_bytes, size, true);
    add_stat(d.stats.segment, 1, true);
    d.stats.num_device_alloc++;
  }
  add_stat(d.stats.allocated_bytes, size, true);
  add_stat(d.stats.active_bytes, size, true);
  add_stat(d.stats.requested_bytes, nbytes, true);
  add_stat(d.stats.allocation, 1, true);
  add_stat(d.stats.active, 1, true);
  return {block->ptr, block, &delete_block, Device(DeviceType::PrivateUse1, device)};
}
// LITERALINCLUDE END: ALLOCATOR_ALLOCATE

DeleterFnPtr OpenRegDeviceAllocator::raw_deleter() const { return &delete_block; }

void OpenRegDeviceAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  OPENREG_CHECK(orMemcpy(dest, src, count, orMemcpyDeviceToDevice));
}

void OpenRegDeviceAllocator::emptyCache(MempoolId_t) {
  for (DeviceIndex i = 0; i < device_count(); ++i) {
    DeviceState& d = *states()[i];
    std::lock_guard<std::mutex> lock(d.mu);
    collect_waiting(d);
    release_cached(d, i);
  }
}

void OpenRegDeviceAllocator::recordStream(const DataPtr& ptr, c10::Stream stream) {
  if (ptr.get() == nullptr) return;
  TORCH_CHECK(ptr.get_deleter() == &delete_block,
              "record_stream: the memory was not allocated by the openreg allocator");
  auto* block = static_cast<Block*>(ptr.get_context());
  DeviceState& d = *states()[block->device];
  std::lock_guard<std::mutex> lock(d.mu);
  if (stream.id() == block->stream) return;
  for (const Stream& s : block->used_on) {
    if (s == stream) return;
  }
  block->used_on.push_back(stream);
}

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
  for_each_stat(d.stats, [](c10::CachingAllocator::Stat& s) { s.reset_accumulated(); });
  d.stats.num_alloc_retries = 0;
  d.stats.num_ooms = 0;
  d.stats.num_device_alloc = 0;
  d.stats.num_device_free = 0;
}

void OpenRegDeviceAllocator::resetPeakStats(DeviceIndex device) {
  check_device_index(device);
  DeviceState& d = *states()[device];
  std::lock_guard<std::mutex> lock(d.mu);
  for_each_stat(d.stats, [](c10::CachingAllocator::Stat& s) { s.reset_peak(); });
}

std::pair<size_t, size_t> OpenRegDeviceAllocator::getMemoryInfo(DeviceIndex device) {
  check_device_index(device);
  DeviceIndex previous = exchange_device(device);
  size_t free_bytes = 0, total = 0;
  orError_t err = orMemGetInfo(&free_bytes, &total);
  set_device(previous);
  OPENREG_CHECK(err);
  return {free_bytes, total};
}

// LITERALINCLUDE START: ALLOCATOR_REGISTER
OpenRegDeviceAllocator* device_allocator() {
  static OpenRegDeviceAllocator allocator;
  return &allocator;
}

REGISTER_ALLOCATOR(DeviceType::PrivateUse1, device_allocator());
// LITERALINCLUDE END: ALLOCATOR_REGISTER

}  // namespace c10::openreg

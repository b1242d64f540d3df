// OpenRegAllocatorStats.cpp: what a device's caching allocator reports: statistics, memory fraction, snapshots, history, profiler events.
#include "OpenRegCachingAllocator.h"

#include <c10/core/Allocator.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace c10::openreg::caching {

namespace {
using c10::CachingAllocator::Stat;
using c10::CachingAllocator::StatArray;
using c10::CachingAllocator::StatType;

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

template <class F>
void for_each_stat(CachingDeviceAllocator::DeviceStats& stats, F f) {
  for (auto* array : {&stats.allocation, &stats.segment, &stats.active, &stats.inactive_split,
                      &stats.allocated_bytes, &stats.reserved_bytes, &stats.active_bytes,
                      &stats.inactive_split_bytes, &stats.requested_bytes}) {
    for (Stat& stat : *array) f(stat);
  }
}
}  // namespace

// profile_memory=True: PyTorch's profiler sees each allocation and free (a free
// is reported when requested, before the statistics drop by `size`).
void DeviceCachingAllocator::report_to_profiler(const char* action, const void* address,
                                                size_t size) {
  if (!c10::memoryProfilingEnabled()) return;
  bool alloc = std::strcmp(action, "alloc") == 0;
  if (!alloc && std::strcmp(action, "free_requested") != 0) return;
  auto total = [](const StatArray& s) {
    return s[static_cast<size_t>(StatType::AGGREGATE)].current;
  };
  int64_t delta = alloc ? static_cast<int64_t>(size) : -static_cast<int64_t>(size);
  c10::reportMemoryUsageToProfiler(
      const_cast<void*>(address), delta, total(stats_.allocated_bytes) + (alloc ? 0 : delta),
      total(stats_.reserved_bytes), Device(DeviceType::PrivateUse1, device_));
}

void DeviceCachingAllocator::record(const char* action, const void* address, size_t size,
                                    StreamId stream) {
  report_to_profiler(action, address, size);
  if (trace_max_ == 0) return;
  if (trace_.size() == trace_max_) trace_.pop_front();
  trace_.push_back({action, reinterpret_cast<size_t>(address), size, stream, now_us()});
}

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
    SegmentSnapshot seg{
        device_, reinterpret_cast<size_t>(head->ptr), 0, 0, 0, 0, head->stream, !head->pool->small,
        {}};
    for (Block* b = head; b != nullptr; b = b->next) {
      const char* state = b->allocated          ? "active_allocated"
                          : !b->pending.empty() ? "active_pending_free"
                                                : "inactive";
      seg.blocks.push_back(
          {reinterpret_cast<size_t>(b->ptr), b->size, b->allocated ? b->requested : 0, state});
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

}  // namespace c10::openreg::caching

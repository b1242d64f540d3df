// copy.cpp: memcpy and memset, checked and queued on a stream; large copies split across channels.
#include "internal.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace openreg {

namespace {
// ---- the copy engine: helper channels, like a DMA engine with several queues ----
constexpr size_t kSplitAtLeast = 4 << 20;  // smaller copies are cheaper done in one piece
constexpr size_t kChunkAlign = 4096;

// Helper channels sleep until a copy is split across them.
struct CopyEngine {
  std::mutex mu;
  std::condition_variable work_cv;
  std::condition_variable done_cv;
  struct Job {
    char* dst;
    const char* src;
    size_t count;
  };
  std::vector<Job> jobs;
  size_t unfinished = 0;
  std::vector<std::thread> channels;

  explicit CopyEngine(unsigned helpers) {
    for (unsigned i = 0; i < helpers; ++i) channels.emplace_back([this] { serve(); });
  }

  void serve() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu);
        work_cv.wait(lock, [this] { return !jobs.empty(); });
        job = jobs.back();
        jobs.pop_back();
      }
      std::memcpy(job.dst, job.src, job.count);
      std::lock_guard<std::mutex> lock(mu);
      if (--unfinished == 0) done_cv.notify_all();
    }
  }
};

CopyEngine* engine() {
  // Leaked on purpose: channels may be busy while static destructors run.
  static CopyEngine* e = new CopyEngine(std::max(1u, std::thread::hardware_concurrency()) - 1);
  return e;
}

std::mutex one_split_copy_at_a_time;

// Copies `count` bytes, splitting large copies across the copy engine's channels.
void engine_copy(void* dst, const void* src, size_t count) {
  CopyEngine* e = count >= kSplitAtLeast ? engine() : nullptr;
  if (e == nullptr || e->channels.empty()) {
    std::memcpy(dst, src, count);
    return;
  }
  std::lock_guard<std::mutex> serial(one_split_copy_at_a_time);
  size_t parts = e->channels.size() + 1;
  size_t chunk = (count / parts + kChunkAlign - 1) / kChunkAlign * kChunkAlign;
  auto* d = static_cast<char*>(dst);
  auto* s = static_cast<const char*>(src);
  {
    std::lock_guard<std::mutex> lock(e->mu);
    for (size_t offset = chunk; offset < count; offset += chunk) {
      e->jobs.push_back({d + offset, s + offset, std::min(chunk, count - offset)});
      ++e->unfinished;
    }
  }
  e->work_cv.notify_all();
  std::memcpy(d, s, std::min(chunk, count));  // this thread is a channel too
  std::unique_lock<std::mutex> lock(e->mu);
  e->done_cv.wait(lock, [e] { return e->unfinished == 0; });
}

// ---- copy tasks ----
struct CopyArgs {
  void* dst;
  const void* src;
  size_t count;
};
void run_copy(void* p) {
  auto* a = static_cast<CopyArgs*>(p);
  engine_copy(a->dst, a->src, a->count);
}

struct SetArgs {
  void* dst;
  int value;
  size_t count;
};
void run_set(void* p) {
  auto* a = static_cast<SetArgs*>(p);
  std::memset(a->dst, a->value, a->count);
}

// Which stream a synchronous copy is ordered on: the device of the device pointer.
orStream_t stream_for_sync_copy(void* dst, const void* src) {
  int dev = device_of(src);
  if (dev < 0) dev = device_of(dst);
  return default_stream(dev < 0 ? current_device() : dev);
}

// Validates a copy and turns device addresses into kernel-view addresses.
orError_t prepare_copy(void*& dst, const void*& src, size_t count, orMemcpyKind kind) {
  bool dst_dev = device_of(dst) >= 0;
  bool src_dev = device_of(src) >= 0;
  bool want_dst_dev = kind == orMemcpyHostToDevice || kind == orMemcpyDeviceToDevice;
  bool want_src_dev = kind == orMemcpyDeviceToHost || kind == orMemcpyDeviceToDevice;
  if (kind < orMemcpyHostToHost || kind > orMemcpyDeviceToDevice) {
    return fail(orErrorInvalidMemcpyDirection, "unknown memcpy kind " + std::to_string(kind));
  }
  if (dst_dev != want_dst_dev || src_dev != want_src_dev) {
    static const char* names[] = {"HostToHost", "HostToDevice", "DeviceToHost", "DeviceToDevice"};
    return fail(orErrorInvalidMemcpyDirection,
                std::string("memcpy ") + names[kind] + " but the destination is " +
                    (dst_dev ? "device" : "host") + " memory and the source is " +
                    (src_dev ? "device" : "host") + " memory");
  }
  if (dst_dev) {
    if (orError_t err = check_device_range(dst, count, "memcpy destination")) return err;
    dst = kernel_address(dst);
  }
  if (src_dev) {
    if (orError_t err = check_device_range(src, count, "memcpy source")) return err;
    src = kernel_address(src);
  }
  return ok();
}
}  // namespace

}  // namespace openreg

using namespace openreg;

extern "C" {

orError_t orMemcpyAsync(void* dst, const void* src, size_t count, orMemcpyKind kind,
                        orStream_t stream) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (count == 0) return ok();
  void* host_side = kind == orMemcpyHostToDevice   ? const_cast<void*>(src)
                    : kind == orMemcpyDeviceToHost ? dst
                                                   : nullptr;
  if (orError_t err = prepare_copy(dst, src, count, kind)) return err;
  orStream_t s = resolve_stream(stream);
  bool pageable = host_side != nullptr && !is_pinned_host(host_side, count);
  if (pageable) {
    if (orError_t err = refuse_if_capturing(s, "a copy from or to pageable host memory"))
      return err;
  }
  uint64_t ticket =
      queue_injected_fault(s, orFaultCopy)
          ? s->submitted.load()
          : submit(s, copied_task(run_copy, CopyArgs{dst, src, count}, TaskKind::Host,
                                  activity_open(s, orActivityKindMemcpy, count, kind)));
  // Pageable host memory may be reused as soon as we return, so the copy is
  // finished before returning; only pinned memory overlaps with the host.
  if (pageable) wait_for(s, ticket);
  return ok();
}

orError_t orMemcpy(void* dst, const void* src, size_t count, orMemcpyKind kind) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (count == 0) return ok();
  orStream_t s = stream_for_sync_copy(dst, src);
  if (kind == orMemcpyHostToHost) {
    if (orError_t err = prepare_copy(dst, src, count, kind)) return err;
    std::memcpy(dst, src, count);
    return ok();
  }
  if (orError_t err = orMemcpyAsync(dst, src, count, kind, s)) return err;
  return orStreamSynchronize(s);
}

orError_t orMemsetAsync(void* dev_ptr, int value, size_t count, orStream_t stream) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (count == 0) return ok();
  if (orError_t err = check_device_range(dev_ptr, count, "memset destination")) return err;
  void* target = kernel_address(dev_ptr);
  orStream_t s = resolve_stream(stream);
  submit(s, copied_task(run_set, SetArgs{target, value, count}, TaskKind::Host,
                        activity_open(s, orActivityKindMemset, count)));
  return ok();
}

orError_t orMemset(void* dev_ptr, int value, size_t count) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (count == 0) return ok();
  int dev = device_of(dev_ptr);
  if (dev < 0) return fail(orErrorInvalidValue, "memset destination is not device memory");
  orStream_t s = default_stream(dev);
  if (orError_t err = orMemsetAsync(dev_ptr, value, count, s)) return err;
  return orStreamSynchronize(s);
}

}  // extern "C"

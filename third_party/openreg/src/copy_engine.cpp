// copy_engine.cpp: large copies split across channels, like a DMA engine with several queues.
#include "internal.h"

#include <cstring>

namespace openreg {

namespace {
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
}  // namespace

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

}  // namespace openreg

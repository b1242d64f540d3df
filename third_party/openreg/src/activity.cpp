// activity.cpp: activity records for profilers: start and end of every kernel, copy and memset.
#include "internal.h"

#include <chrono>
#include <utility>

namespace openreg {

// LITERALINCLUDE START: DRIVER_ACTIVITY_RECORD
std::atomic<bool> activity_recording{false};

// What a launch made while recording carries to the stream's worker: the task
// it wraps and the record the worker completes around it.
struct PendingActivity {
  Task task;
  orActivityRecord record;
};

namespace {
std::mutex records_mu;
std::vector<orActivityRecord>& finished() {
  static auto* records = new std::vector<orActivityRecord>();  // leaked: workers outlive statics
  return *records;
}
std::atomic<uint64_t> next_correlation{1};
thread_local std::vector<uint64_t> external_ids;  // this thread's stack

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Runs on the worker in place of the wrapped task.
void run_recorded(void* p) {
  auto* a = static_cast<PendingActivity*>(p);
  a->record.start_ns = now_ns();
  struct Stamp {  // the end is stamped even if the task throws
    PendingActivity* a;
    ~Stamp() {
      a->record.end_ns = now_ns();
      std::lock_guard<std::mutex> lock(records_mu);
      finished().push_back(a->record);
    }
  } stamp{a};
  a->task.fn(a->task.arguments());
}

void release_recorded(void* p) {
  auto* a = static_cast<PendingActivity*>(p);
  a->task.release_arguments();
  delete a;
}
}  // namespace

PendingActivity* activity_open_slow(orStream_t s, orActivityKind kind, size_t bytes,
                                    orMemcpyKind copy_kind) {
  auto* a = new PendingActivity{};
  a->record.kind = kind;
  a->record.device = s->device;
  a->record.stream = s;
  a->record.default_stream = s->is_default ? 1 : 0;
  a->record.memcpy_kind = copy_kind;
  a->record.bytes = bytes;
  a->record.correlation_id = next_correlation.fetch_add(1, std::memory_order_relaxed);
  a->record.external_id = external_ids.empty() ? 0 : external_ids.back();
  a->record.queued_ns = now_ns();
  return a;
}

Task activity_wrap(const Task& t) {
  PendingActivity* a = t.activity;
  a->task = t;
  a->task.activity = nullptr;
  return boxed_task(run_recorded, a, t.kind, release_recorded);
}

// A task captured or refused instead of run drops its pending record.
void activity_discard(PendingActivity* a) { delete a; }
// LITERALINCLUDE END: DRIVER_ACTIVITY_RECORD

}  // namespace openreg

using namespace openreg;

extern "C" {

orError_t orActivityEnable(int enable) {
  std::lock_guard<std::mutex> lock(records_mu);
  if (enable != 0) finished().clear();
  activity_recording.store(enable != 0, std::memory_order_release);
  return ok();
}

orError_t orActivityGetTimestamp(uint64_t* ns) {
  if (ns == nullptr) return fail(orErrorInvalidValue, "orActivityGetTimestamp: ns is NULL");
  *ns = now_ns();
  return ok();
}

orError_t orActivityPushExternalCorrelationId(uint64_t id) {
  external_ids.push_back(id);
  return ok();
}

orError_t orActivityPopExternalCorrelationId(uint64_t* id) {
  if (external_ids.empty()) {
    return fail(orErrorInvalidValue, "orActivityPopExternalCorrelationId: the stack is empty");
  }
  if (id != nullptr) *id = external_ids.back();
  external_ids.pop_back();
  return ok();
}

orError_t orActivityFlush(orActivityCallback callback, void* user_data) {
  if (callback == nullptr) return fail(orErrorInvalidValue, "orActivityFlush: callback is NULL");
  std::vector<orActivityRecord> taken;
  {
    std::lock_guard<std::mutex> lock(records_mu);
    taken.swap(finished());
  }
  if (!taken.empty()) callback(taken.data(), taken.size(), user_data);
  return ok();
}

}  // extern "C"

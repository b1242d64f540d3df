// stream.cpp: in-order streams, each run by a worker thread that takes its tasks from a ring of slots.
#include "internal.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#if defined(__x86_64__)
#include <immintrin.h>
#define OPENREG_PAUSE() _mm_pause()
#else
#define OPENREG_PAUSE() std::this_thread::yield()
#endif

namespace openreg {

namespace {
// A worker that just finished spins this long before sleeping, and a waiter
// spins this long before blocking: wake-ups through the kernel cost tens of
// microseconds, which would dominate small kernels.
constexpr auto kSpin = std::chrono::microseconds(50);

// A stream holds at most this many tasks not yet run; a launch beyond that
// waits for the oldest to finish. Without a bound, a host that launches
// faster than the device runs queues without end: memory grows, and every
// task's arguments are freed on another thread long after they were
// allocated, the slowest pattern for malloc.
constexpr uint64_t kMaxPending = 1024;

struct DeviceStreams {
  std::once_flag once;
  orStream_t default_stream = nullptr;
  std::mutex mu;
  std::vector<orStream_t> streams;  // every live stream of the device
};

std::vector<DeviceStreams>& device_streams() {
  static auto* all = new std::vector<DeviceStreams>(config().device_count);
  return *all;
}
}  // namespace

// Set on a stream's worker thread: whether its task is a kernel, and which stream it serves.
constinit thread_local bool in_kernel = false;
constinit thread_local orStream_t running_stream = nullptr;

// LITERALINCLUDE START: DRIVER_STREAM_WORKER
// `task` is the worker's own copy: a kernel may change its copied arguments.
void run_task(Task& task) {
  if (unsigned us = stream_delay_us()) std::this_thread::sleep_for(std::chrono::microseconds(us));
  in_kernel = task.kind == TaskKind::Kernel;
  try {
    task.fn(task.arguments());
  } catch (...) {
    orKernelFail("a kernel threw an exception");
  }
  in_kernel = false;
}

// Spins for up to kSpin until ready() holds, before a caller pays for a
// sleep; false if it still does not. The clock is read only every so often,
// it costs more than a pause. Every few microseconds the spinner offers its
// core: when the thread it waits for shares that core (the other core taken
// by another process, or by the hypervisor), a spin that never yields holds
// the core for all of kSpin while the awaited thread cannot run.
template <class Ready>
static bool spin_until(Ready ready) {
  auto deadline = Clock::now() + kSpin;
  for (unsigned i = 1; !ready(); ++i) {
    if (i % 64 == 0) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::yield();
    }
    OPENREG_PAUSE();
  }
  return true;
}

// The runtime's idle callback (orSetWorkerIdleCallback) and after how long a
// worker without work calls it.
static std::atomic<void (*)()> idle_callback{nullptr};
static std::atomic<unsigned> idle_after_us{0};

// Waits until the slot holds position `pos`'s task; false if the stream is
// being destroyed and has nothing left to run.
static bool wait_for_task(orStream_t s, const RingSlot& slot, uint64_t pos) {
  if (spin_until([&] { return slot.turn.load(std::memory_order_acquire) == pos + 1; })) return true;
  std::unique_lock<std::mutex> lock(s->mu);
  // seq_cst on both sides of this handshake: we announce the sleep and then
  // read the slot; a launch fills the slot and then reads `sleeping`. One of
  // the two sees the other's write, so no launch goes unnoticed.
  s->sleeping.store(true);
  auto has_task = [&] { return slot.turn.load() == pos + 1 || s->stopping; };
  if (auto idle = idle_callback.load(std::memory_order_acquire)) {
    auto after = std::chrono::microseconds(idle_after_us.load(std::memory_order_relaxed));
    if (!s->work_cv.wait_for(lock, after, has_task)) {
      lock.unlock();  // a launch meanwhile finds `sleeping` set and notifies no one: has_task sees it
      idle();
      lock.lock();
    }
  }
  s->work_cv.wait(lock, has_task);
  s->sleeping.store(false, std::memory_order_relaxed);
  return slot.turn.load(std::memory_order_acquire) == pos + 1;
}

static void run_worker(orStream_t s) {
  current_device() = s->device;
  running_stream = s;
  for (uint64_t pos = 0;; ++pos) {
    RingSlot& slot = s->ring[pos % kRingSlots];
    if (!wait_for_task(s, slot, pos)) return;  // stopping and drained
    Task task = slot.task;
    slot.turn.store(pos + kRingSlots, std::memory_order_release);  // free for the next lap
    run_task(task);
    task.release_arguments();
    // seq_cst on both sides of this handshake: a waiter announces itself
    // (`waiters`, then `wake_at`) and then reads `completed`; we bump
    // `completed` and then read `waiters` and `wake_at`. A waiter for a
    // later ticket is not woken by every task: a wake-up is a system call.
    uint64_t done = s->completed.fetch_add(1) + 1;
    if (s->waiters.load() > 0 && done >= s->wake_at.load()) {
      std::lock_guard<std::mutex> lock(s->mu);
      s->wake_at.store(UINT64_MAX);  // each waiter still short of its ticket sets it again
      s->done_cv.notify_all();
    }
  }
}
// LITERALINCLUDE END: DRIVER_STREAM_WORKER

namespace {
orStream_t create_stream(int device, int priority, bool is_default) {
  mark_started();
  auto* s = new orStream_st();
  s->device = device;
  s->priority = priority;
  s->is_default = is_default;
  s->worker = std::thread(run_worker, s);
  auto& ds = device_streams()[device];
  std::lock_guard<std::mutex> lock(ds.mu);
  ds.streams.push_back(s);
  return s;
}
}  // namespace

orStream_t default_stream(int device) {
  auto& ds = device_streams()[device];
  std::call_once(ds.once, [&] { ds.default_stream = create_stream(device, 0, true); });
  return ds.default_stream;
}

// LITERALINCLUDE START: DRIVER_SUBMIT
uint64_t submit(orStream_t s, Task t) {
  if (s->capture.load(std::memory_order_acquire) != nullptr) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (orGraph_t graph = s->capture.load()) {  // recorded, not run
      if (t.activity != nullptr) activity_discard(std::exchange(t.activity, nullptr));
      graph->nodes.push_back(t);
      return 0;
    }
  }
  bool own_worker = running_stream == s;  // a stream's own worker never waits for itself
  uint64_t pos;
  if (!own_worker) {
    pos = s->submitted.fetch_add(1, std::memory_order_relaxed);
    // The slot is still taken only if kRingSlots tasks wait: more than the
    // kMaxPending a launch lets wait, unless many threads launch at once.
    if (s->ring[pos % kRingSlots].turn.load(std::memory_order_acquire) != pos) {
      wait_for(s, pos + 1 - kRingSlots);  // the slot's previous task has been taken
    }
  } else {
    // A task launching on its own stream: only this thread frees slots, so
    // it takes a ticket only if that ticket's slot is free now.
    pos = s->submitted.load(std::memory_order_relaxed);
    do {
      if (s->ring[pos % kRingSlots].turn.load(std::memory_order_acquire) != pos) {
        if (t.activity != nullptr) activity_discard(t.activity);
        t.release_arguments();
        orKernelFail("a task queued more work on its own stream than the stream holds");
        return 0;
      }
    } while (!s->submitted.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed));
  }
  uint64_t ticket = pos + 1;
  RingSlot& slot = s->ring[pos % kRingSlots];
  if (t.activity != nullptr) t = activity_wrap(t);
  slot.task = t;
  slot.turn.store(pos + 1);  // seq_cst: see wait_for_task
  if (s->sleeping.load()) {
    {
      std::lock_guard<std::mutex> lock(s->mu);
    }  // the worker is in its wait, or sees the slot
    s->work_cv.notify_one();
  }
  if (!own_worker) {
    // More than kMaxPending tasks wait. `completed` changes with every task
    // the worker runs: reading it at every launch would cost a cache miss.
    // Reread it only when the last value read says the stream is full.
    uint64_t seen = s->seen_completed.load(std::memory_order_relaxed);
    if (ticket > seen + kMaxPending) {
      seen = s->completed.load(std::memory_order_acquire);
      s->seen_completed.store(seen, std::memory_order_relaxed);
    }
    bool full = ticket > seen + kMaxPending;
    if (config().launch_blocking) {
      wait_for(s, ticket);
    } else if (full) {
      // Wait, as a GPU's launch does, until half of the queue has run.
      // Waiting for one free slot at a time would keep this thread spinning
      // beside the worker, on the core the worker's parallel CPU kernels need.
      wait_for(s, ticket - kMaxPending / 2);
    }
  }
  return ticket;
}
// LITERALINCLUDE END: DRIVER_SUBMIT

void wait_for(orStream_t s, uint64_t ticket) {
  if (spin_until([&] { return s->completed.load(std::memory_order_acquire) >= ticket; })) return;
  s->waiters.fetch_add(1);
  std::unique_lock<std::mutex> lock(s->mu);
  s->done_cv.wait(lock, [&] {
    if (ticket < s->wake_at.load()) s->wake_at.store(ticket);  // under the lock: no race
    return s->completed.load() >= ticket;
  });
  s->waiters.fetch_sub(1);
}

bool is_capturing(orStream_t s) { return s->capture.load(std::memory_order_acquire) != nullptr; }

orError_t refuse_if_capturing(orStream_t s, const char* what) {
  if (!is_capturing(s)) return ok();
  return fail(orErrorNotPermitted, std::string(what) +
                                       " is not permitted while the stream is "
                                       "capturing a graph: it would wait for work that never runs");
}

orError_t take_stream_error(orStream_t s) {
  if (!s->failed.load(std::memory_order_acquire)) return ok();
  std::string message;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    message.swap(s->error);
    s->failed.store(false, std::memory_order_release);
  }
  return fail(orErrorLaunchFailure, message);
}

orError_t synchronize_device(int device) {
  std::vector<orStream_t> streams;
  {
    auto& ds = device_streams()[device];
    std::lock_guard<std::mutex> lock(ds.mu);
    streams = ds.streams;
  }
  for (orStream_t s : streams) {
    if (orError_t err = refuse_if_capturing(s, "synchronizing the device")) return err;
  }
  orError_t first = orSuccess;
  for (orStream_t s : streams) {
    wait_for(s, s->submitted.load(std::memory_order_acquire));
    orError_t err = take_stream_error(s);
    if (first == orSuccess) first = err;
  }
  return first;
}

void for_each_stream(int device, const std::function<void(orStream_t)>& fn) {
  auto& ds = device_streams()[device];
  std::lock_guard<std::mutex> lock(ds.mu);  // no stream of the list is destroyed meanwhile
  for (orStream_t s : ds.streams) fn(s);
}

namespace {
// Handles come from callers the driver cannot trust (a binding handed an integer, a
// library passing a stale handle). The calls that take a handle from outside check it
// against the live ones: an error, never a dereference of garbage. The launch and copy
// paths, fed by the backend's own streams, skip the check.
orError_t check_stream(orStream_t stream, const char* what) {
  if (stream == nullptr) return ok();  // the current device's default stream
  for (auto& ds : device_streams()) {
    std::lock_guard<std::mutex> lock(ds.mu);
    if (std::find(ds.streams.begin(), ds.streams.end(), stream) != ds.streams.end()) return ok();
  }
  return fail(orErrorInvalidResourceHandle, std::string(what) + ": not a live stream handle");
}
}  // namespace

}  // namespace openreg

using namespace openreg;

extern "C" {

orError_t orStreamCreate(orStream_t* stream) { return orStreamCreateWithPriority(stream, 0); }

orError_t orStreamCreateWithPriority(orStream_t* stream, int priority) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (stream == nullptr) return fail(orErrorInvalidValue, "orStreamCreate: stream is NULL");
  int least, greatest;
  orDeviceGetStreamPriorityRange(&least, &greatest);
  if (priority > least || priority < greatest) {
    return fail(orErrorInvalidValue, "stream priority " + std::to_string(priority) +
                                         " is outside [" + std::to_string(greatest) + ", " +
                                         std::to_string(least) + "]");
  }
  if (orError_t err = check_device(current_device())) return err;
  *stream = create_stream(current_device(), priority, false);
  return ok();
}

orError_t orStreamDestroy(orStream_t stream) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (orError_t err = check_stream(stream, "orStreamDestroy")) return err;
  if (stream == nullptr || stream->is_default) {
    return fail(orErrorInvalidResourceHandle, "a default stream cannot be destroyed");
  }
  wait_for(stream, stream->submitted.load());
  {
    auto& ds = device_streams()[stream->device];
    std::lock_guard<std::mutex> lock(ds.mu);
    std::erase(ds.streams, stream);
  }
  {
    std::lock_guard<std::mutex> lock(stream->mu);
    stream->stopping = true;
  }
  stream->work_cv.notify_one();
  stream->worker.join();
  delete stream;
  return ok();
}

orError_t orStreamGetDevice(orStream_t stream, int* device) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (device == nullptr) return fail(orErrorInvalidValue, "orStreamGetDevice: device is NULL");
  if (orError_t err = check_stream(stream, "orStreamGetDevice")) return err;
  *device = resolve_stream(stream)->device;
  return ok();
}

orError_t orStreamGetPriority(orStream_t stream, int* priority) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (priority == nullptr)
    return fail(orErrorInvalidValue, "orStreamGetPriority: priority is NULL");
  if (orError_t err = check_stream(stream, "orStreamGetPriority")) return err;
  *priority = resolve_stream(stream)->priority;
  return ok();
}

orError_t orStreamSynchronize(orStream_t stream) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (orError_t err = check_stream(stream, "orStreamSynchronize")) return err;
  orStream_t s = resolve_stream(stream);
  if (orError_t err = refuse_if_capturing(s, "synchronizing the stream")) return err;
  wait_for(s, s->submitted.load(std::memory_order_acquire));
  return take_stream_error(s);
}

orError_t orStreamQuery(orStream_t stream) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (orError_t err = check_stream(stream, "orStreamQuery")) return err;
  orStream_t s = resolve_stream(stream);
  if (orError_t err = refuse_if_capturing(s, "querying the stream")) return err;
  if (s->completed.load(std::memory_order_acquire) < s->submitted.load(std::memory_order_acquire)) {
    return orErrorNotReady;
  }
  return take_stream_error(s);
}

orError_t orDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (least == nullptr || greatest == nullptr) {
    return fail(orErrorInvalidValue, "orDeviceGetStreamPriorityRange: NULL output");
  }
  *least = 0;  // lower numbers are higher priorities, as on CUDA
  *greatest = -1;
  return ok();
}

orError_t orSetWorkerIdleCallback(void (*fn)(void), unsigned microseconds) {
  if (microseconds > 1'000'000) {
    return fail(orErrorInvalidValue, "orSetWorkerIdleCallback: at most one second of idleness");
  }
  idle_after_us.store(microseconds, std::memory_order_relaxed);
  idle_callback.store(fn, std::memory_order_release);
  return ok();
}

}  // extern "C"

// stream.cpp: in-order streams run by worker threads, events, launches and copies.
// LITERALINCLUDE START: DRIVER_STREAM_INCLUDES
#include "internal.h"

#include <chrono>
#include <cstring>
#include <memory>
#include <utility>
#include <unordered_set>
#include <algorithm>
// LITERALINCLUDE END: DRIVER_STREAM_INCLUDES

// LITERALINCLUDE START: DRIVER_OPENREG_PAUSE
#if defined(__x86_64__)
#include <immintrin.h>
#define OPENREG_PAUSE() _mm_pause()
#else
#define OPENREG_PAUSE() std::this_thread::yield()
#endif
// LITERALINCLUDE END: DRIVER_OPENREG_PAUSE

namespace openreg {

namespace {
// LITERALINCLUDE START: DRIVER_CLOCK
using Clock = std::chrono::steady_clock;
// LITERALINCLUDE END: DRIVER_CLOCK

// LITERALINCLUDE START: DRIVER_K_SPIN
// A worker that just finished spins this long before sleeping, and a waiter
// spins this long before blocking: wake-ups through the kernel cost tens of
// microseconds, which would dominate small kernels.
constexpr auto kSpin = std::chrono::microseconds(50);
// LITERALINCLUDE END: DRIVER_K_SPIN

// LITERALINCLUDE START: DRIVER_K_MAX_PENDING
// A stream holds at most this many tasks not yet run; a launch beyond that
// waits for the oldest to finish. Without a bound, a host that launches
// faster than the device runs queues without end: memory grows, and every
// task's arguments are freed on another thread long after they were
// allocated, the slowest pattern for malloc.
constexpr uint64_t kMaxPending = 1024;
// LITERALINCLUDE END: DRIVER_K_MAX_PENDING

// LITERALINCLUDE START: DRIVER_THREAD_LOCALS
// Set on a stream's worker thread: whether its task is a kernel, and which stream it serves.
thread_local bool in_kernel = false;
thread_local orStream_t running_stream = nullptr;
// LITERALINCLUDE END: DRIVER_THREAD_LOCALS

// LITERALINCLUDE START: DRIVER_DEF_DEVICE_STREAMS
struct DeviceStreams {
  std::once_flag once;
  orStream_t default_stream = nullptr;
  std::mutex mu;
  std::vector<orStream_t> streams;  // every live stream of the device
};
// LITERALINCLUDE END: DRIVER_DEF_DEVICE_STREAMS

// LITERALINCLUDE START: DRIVER_DEVICE_STREAMS
std::vector<DeviceStreams>& device_streams() {
  static auto* all = new std::vector<DeviceStreams>(config().device_count);
  return *all;
}
// LITERALINCLUDE END: DRIVER_DEVICE_STREAMS

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
bool spin_until(Ready ready) {
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

// Waits until the slot holds position `pos`'s task; false if the stream is
// being destroyed and has nothing left to run.
bool wait_for_task(orStream_t s, const RingSlot& slot, uint64_t pos) {
  if (spin_until([&] { return slot.turn.load(std::memory_order_acquire) == pos + 1; })) return true;
  std::unique_lock<std::mutex> lock(s->mu);
  // seq_cst on both sides of this handshake: we announce the sleep and then
  // read the slot; a launch fills the slot and then reads `sleeping`. One of
  // the two sees the other's write, so no launch goes unnoticed.
  s->sleeping.store(true);
  s->work_cv.wait(lock, [&] { return slot.turn.load() == pos + 1 || s->stopping; });
  s->sleeping.store(false, std::memory_order_relaxed);
  return slot.turn.load(std::memory_order_acquire) == pos + 1;
}

void run_worker(orStream_t s) {
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

// LITERALINCLUDE START: DRIVER_CREATE_STREAM
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
// LITERALINCLUDE END: DRIVER_CREATE_STREAM

// ---- task payloads ----
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

template <class T>
void release_args(void* p) {
  delete static_cast<T*>(p);
}

struct EventState {
  std::mutex mu;
  bool timing = true;
  orStream_t stream = nullptr;  // where it was last recorded
  uint64_t ticket = 0;          // the marker's ticket on that stream
  uint64_t generation = 0;
  bool stamped = false;
  Clock::time_point stamp;
};

struct MarkerArgs {
  std::shared_ptr<EventState> state;
  uint64_t generation;
};
void run_marker(void* p) {
  auto* a = static_cast<MarkerArgs*>(p);
  auto now = Clock::now();
  std::lock_guard<std::mutex> lock(a->state->mu);
  if (a->state->generation == a->generation) {
    a->state->stamp = now;
    a->state->stamped = true;
  }
}

struct WaitArgs {
  orStream_t stream;
  uint64_t ticket;
};
void run_wait(void* p) {
  auto* a = static_cast<WaitArgs*>(p);
  wait_for(a->stream, a->ticket);
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

// LITERALINCLUDE START: DRIVER_DEFAULT_STREAM
orStream_t default_stream(int device) {
  auto& ds = device_streams()[device];
  std::call_once(ds.once, [&] { ds.default_stream = create_stream(device, 0, true); });
  return ds.default_stream;
}
// LITERALINCLUDE END: DRIVER_DEFAULT_STREAM

// LITERALINCLUDE START: DRIVER_RESOLVE_STREAM
orStream_t resolve_stream(orStream_t stream) {
  return stream != nullptr ? stream : default_stream(current_device());
}
// LITERALINCLUDE END: DRIVER_RESOLVE_STREAM

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
    { std::lock_guard<std::mutex> lock(s->mu); }  // the worker is in its wait, or sees the slot
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

// LITERALINCLUDE START: DRIVER_WAIT_FOR
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
// LITERALINCLUDE END: DRIVER_WAIT_FOR

// LITERALINCLUDE START: DRIVER_IS_CAPTURING
bool is_capturing(orStream_t s) {
  return s->capture.load(std::memory_order_acquire) != nullptr;
}
// LITERALINCLUDE END: DRIVER_IS_CAPTURING

// LITERALINCLUDE START: DRIVER_REFUSE_IF_CAPTURING
orError_t refuse_if_capturing(orStream_t s, const char* what) {
  if (!is_capturing(s)) return ok();
  return fail(orErrorNotPermitted, std::string(what) + " is not permitted while the stream is "
                                       "capturing a graph: it would wait for work that never runs");
}
// LITERALINCLUDE END: DRIVER_REFUSE_IF_CAPTURING

// LITERALINCLUDE START: DRIVER_TAKE_STREAM_ERROR
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
// LITERALINCLUDE END: DRIVER_TAKE_STREAM_ERROR

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

// LITERALINCLUDE START: DRIVER_FOR_EACH_STREAM
void for_each_stream(int device, const std::function<void(orStream_t)>& fn) {
  auto& ds = device_streams()[device];
  std::lock_guard<std::mutex> lock(ds.mu);  // no stream of the list is destroyed meanwhile
  for (orStream_t s : ds.streams) fn(s);
}
// LITERALINCLUDE END: DRIVER_FOR_EACH_STREAM

// ---- handle checks ----
// Handles come from callers the driver cannot trust (a binding handed an integer, a
// library passing a stale handle). The calls that take a handle from outside check it
// against the live ones: an error, never a dereference of garbage. The launch and copy
// paths, fed by the backend's own streams, skip the check.
std::mutex live_events_mu;
std::unordered_set<const void*>& live_events() {
  static auto* set = new std::unordered_set<const void*>();
  return *set;
}

orError_t check_event(orEvent_t event, const char* what) {
  std::lock_guard<std::mutex> lock(live_events_mu);
  if (event == nullptr || live_events().count(event) == 0) {
    return fail(orErrorInvalidResourceHandle, std::string(what) + ": not a live event handle");
  }
  return ok();
}

orError_t check_stream(orStream_t stream, const char* what) {
  if (stream == nullptr) return ok();  // the current device's default stream
  for (auto& ds : device_streams()) {
    std::lock_guard<std::mutex> lock(ds.mu);
    if (std::find(ds.streams.begin(), ds.streams.end(), stream) != ds.streams.end()) return ok();
  }
  return fail(orErrorInvalidResourceHandle, std::string(what) + ": not a live stream handle");
}

}  // namespace openreg

using namespace openreg;

extern "C" {

// ---- streams ----

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
  if (priority == nullptr) return fail(orErrorInvalidValue, "orStreamGetPriority: priority is NULL");
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
  *least = 0;     // lower numbers are higher priorities, as on CUDA
  *greatest = -1;
  return ok();
}

orError_t orStreamWaitEvent(orStream_t stream, orEvent_t event) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (orError_t err = check_event(event, "orStreamWaitEvent")) return err;
  orStream_t s = resolve_stream(stream);
  auto& state = *reinterpret_cast<std::shared_ptr<EventState>*>(event);
  orStream_t target;
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(state->mu);
    target = state->stream;
    ticket = state->ticket;
  }
  // Never recorded, or recorded on this very stream: in-order already.
  if (target == nullptr || target == s) return ok();
  if (is_capturing(s)) {
    return fail(orErrorNotPermitted, "a capturing stream cannot wait for work outside the capture");
  }
  submit(s, copied_task(run_wait, WaitArgs{target, ticket}, TaskKind::Host));
  return ok();
}

// ---- events ----

orError_t orEventCreate(orEvent_t* event) { return orEventCreateWithFlags(event, orEventDefault); }

orError_t orEventCreateWithFlags(orEvent_t* event, unsigned flags) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (event == nullptr) return fail(orErrorInvalidValue, "orEventCreate: event is NULL");
  auto* holder = new std::shared_ptr<EventState>(std::make_shared<EventState>());
  (*holder)->timing = (flags & orEventDisableTiming) == 0;
  *event = reinterpret_cast<orEvent_t>(holder);
  std::lock_guard<std::mutex> lock(live_events_mu);
  live_events().insert(*event);
  return ok();
}

orError_t orEventDestroy(orEvent_t event) {
  OR_REFUSE_IN_FORKED_CHILD();
  {
    std::lock_guard<std::mutex> lock(live_events_mu);
    if (event == nullptr || live_events().erase(event) == 0) {
      return fail(orErrorInvalidResourceHandle, "orEventDestroy: not a live event handle");
    }
  }
  delete reinterpret_cast<std::shared_ptr<EventState>*>(event);  // a pending marker keeps the state
  return ok();
}

orError_t orEventRecord(orEvent_t event, orStream_t stream) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (orError_t err = check_event(event, "orEventRecord")) return err;
  orStream_t s = resolve_stream(stream);
  auto& state = *reinterpret_cast<std::shared_ptr<EventState>*>(event);
  std::lock_guard<std::mutex> lock(state->mu);  // the marker cannot stamp before we finish
  uint64_t generation = ++state->generation;
  state->stamped = false;
  state->stream = s;
  state->ticket = submit(s, boxed_task(run_marker, new MarkerArgs{state, generation}, TaskKind::Host,
                                       release_args<MarkerArgs>));
  return ok();
}

orError_t orEventQuery(orEvent_t event) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (orError_t err = check_event(event, "orEventQuery")) return err;
  auto& state = *reinterpret_cast<std::shared_ptr<EventState>*>(event);
  std::lock_guard<std::mutex> lock(state->mu);
  if (state->stream == nullptr) return ok();
  return state->stream->completed.load(std::memory_order_acquire) >= state->ticket ? orSuccess
                                                                                   : orErrorNotReady;
}

orError_t orEventSynchronize(orEvent_t event) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (orError_t err = check_event(event, "orEventSynchronize")) return err;
  auto& state = *reinterpret_cast<std::shared_ptr<EventState>*>(event);
  orStream_t target;
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(state->mu);
    target = state->stream;
    ticket = state->ticket;
  }
  if (target != nullptr) wait_for(target, ticket);
  return ok();
}

orError_t orEventElapsedTime(float* ms, orEvent_t start, orEvent_t end) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (ms == nullptr) return fail(orErrorInvalidValue, "orEventElapsedTime: ms is NULL");
  if (orError_t err = check_event(start, "orEventElapsedTime")) return err;
  if (orError_t err = check_event(end, "orEventElapsedTime")) return err;
  auto& a = *reinterpret_cast<std::shared_ptr<EventState>*>(start);
  auto& b = *reinterpret_cast<std::shared_ptr<EventState>*>(end);
  std::scoped_lock lock(a->mu, b->mu);
  if (!a->timing || !b->timing) {
    return fail(orErrorInvalidResourceHandle, "elapsed time needs two events created with timing");
  }
  if (a->stream == nullptr || b->stream == nullptr) {
    return fail(orErrorInvalidResourceHandle, "elapsed time needs two recorded events");
  }
  if (!a->stamped || !b->stamped) {
    return fail(orErrorNotReady, "an event has not completed yet");
  }
  *ms = std::chrono::duration<float, std::milli>(b->stamp - a->stamp).count();
  return ok();
}

// ---- work ----

// LITERALINCLUDE START: DRIVER_FAULT_QUEUE
// What an injected launch or copy fault queues instead of the work: a failure
// that the stream reports at its next synchronization.
void run_injected_fault(void* what) { orKernelFail(static_cast<const char*>(what)); }
bool queue_injected_fault(orStream_t s, orFaultKind kind) {
  if (!fault_due(kind)) return false;
  submit(s, boxed_task(run_injected_fault,
                       const_cast<char*>(kind == orFaultCopy ? "injected fault: a copy failed"
                                                             : "injected fault: a kernel launch failed"),
                       TaskKind::Kernel));
  return true;
}
// LITERALINCLUDE END: DRIVER_FAULT_QUEUE

// LITERALINCLUDE START: DRIVER_LAUNCH_WITH_ARGS
// Every kernel launch ends here, its arguments boxed or copied: the task is
// queued, or an injected launch fault in its place (the task's arguments are
// then released: it will never run).
static orError_t queue_kernel(orStream_t s, Task t) {
  if (queue_injected_fault(s, orFaultLaunch)) {
    t.release_arguments();
  } else {
    t.activity = activity_open(s, orActivityKindKernel);
    submit(s, t);
  }
  return config().launch_blocking ? take_stream_error(s) : ok();
}

orError_t orLaunchKernelWithArgs(orStream_t stream, orKernelFn kernel, const void* args, size_t size) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (kernel == nullptr) return fail(orErrorInvalidValue, "orLaunchKernelWithArgs: kernel is NULL");
  if (size > OR_LAUNCH_ARGS_MAX) {
    return fail(orErrorInvalidValue, "orLaunchKernelWithArgs: " + std::to_string(size) +
                                         " bytes of arguments, more than OR_LAUNCH_ARGS_MAX (" +
                                         std::to_string(OR_LAUNCH_ARGS_MAX) + ")");
  }
  if (args == nullptr && size > 0) return fail(orErrorInvalidValue, "orLaunchKernelWithArgs: args is NULL");
  return queue_kernel(resolve_stream(stream), copied_task(kernel, args, size, TaskKind::Kernel));
}
// LITERALINCLUDE END: DRIVER_LAUNCH_WITH_ARGS

orError_t orLaunchKernel(orStream_t stream, orKernelFn kernel, void* args) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (kernel == nullptr) return fail(orErrorInvalidValue, "orLaunchKernel: kernel is NULL");
  return queue_kernel(resolve_stream(stream), boxed_task(kernel, args, TaskKind::Kernel));
}

orError_t orLaunchKernelEx(orStream_t stream, orKernelFn kernel, void* args, orHostFn release) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (kernel == nullptr) return fail(orErrorInvalidValue, "orLaunchKernelEx: kernel is NULL");
  return queue_kernel(resolve_stream(stream), boxed_task(kernel, args, TaskKind::Kernel, release));
}

orError_t orLaunchHostFunc(orStream_t stream, orHostFn fn, void* user_data) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (fn == nullptr) return fail(orErrorInvalidValue, "orLaunchHostFunc: fn is NULL");
  submit(resolve_stream(stream), boxed_task(fn, user_data, TaskKind::Host));
  return ok();
}

// LITERALINCLUDE START: DRIVER_KERNEL_POINTER
orError_t orGetKernelPointer(void** kernel_ptr, const void* dev_ptr) {
  if (kernel_ptr == nullptr) return fail(orErrorInvalidValue, "orGetKernelPointer: kernel_ptr is NULL");
  if (!in_kernel) {
    return fail(orErrorNotPermitted, "device memory is reachable only from inside a kernel");
  }
  if (dev_ptr == nullptr) {
    *kernel_ptr = nullptr;
    return ok();
  }
  *kernel_ptr = kernel_address(dev_ptr);
  if (*kernel_ptr == nullptr) return fail(orErrorInvalidDevicePointer, "kernel argument is not device memory");
  return ok();
}
// LITERALINCLUDE END: DRIVER_KERNEL_POINTER

// LITERALINCLUDE START: DRIVER_OR_KERNEL_FAIL
orError_t orKernelFail(const char* message) {
  if (running_stream == nullptr) return fail(orErrorNotPermitted, "orKernelFail outside a kernel");
  std::lock_guard<std::mutex> lock(running_stream->mu);
  if (!running_stream->failed.load()) {
    running_stream->error = message != nullptr ? message : "kernel failed";
    running_stream->failed.store(true, std::memory_order_release);
  }
  return ok();
}
// LITERALINCLUDE END: DRIVER_OR_KERNEL_FAIL

orError_t orMemcpyAsync(void* dst, const void* src, size_t count, orMemcpyKind kind,
                        orStream_t stream) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (count == 0) return ok();
  void* host_side = kind == orMemcpyHostToDevice ? const_cast<void*>(src)
                    : kind == orMemcpyDeviceToHost ? dst
                                                   : nullptr;
  if (orError_t err = prepare_copy(dst, src, count, kind)) return err;
  orStream_t s = resolve_stream(stream);
  bool pageable = host_side != nullptr && !is_pinned_host(host_side, count);
  if (pageable) {
    if (orError_t err = refuse_if_capturing(s, "a copy from or to pageable host memory")) return err;
  }
  uint64_t ticket = queue_injected_fault(s, orFaultCopy)
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

// ---- graphs ----

namespace {
// LITERALINCLUDE START: DRIVER_RUN_GRAPH
void run_graph(void* p) {
  for (const Task& node : static_cast<orGraph_t>(p)->nodes) {
    Task task = node;  // each replay gets its own copy of copied arguments
    run_task(task);
  }
}
// LITERALINCLUDE END: DRIVER_RUN_GRAPH
}  // namespace

extern "C" {

// LITERALINCLUDE START: DRIVER_GRAPH_CAPTURE
orError_t orStreamBeginCapture(orStream_t stream) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (stream == nullptr) {
    return fail(orErrorNotPermitted, "the default stream cannot be captured; use another stream");
  }
  std::lock_guard<std::mutex> lock(stream->mu);
  if (stream->capture.load() != nullptr) return fail(orErrorNotPermitted, "the stream is already capturing");
  stream->capture.store(new orGraph_st{stream->device, {}});
  return ok();
}

orError_t orStreamEndCapture(orStream_t stream, orGraph_t* graph) {
  if (stream == nullptr || graph == nullptr) return fail(orErrorInvalidValue, "orStreamEndCapture: NULL argument");
  std::lock_guard<std::mutex> lock(stream->mu);
  if (stream->capture.load() == nullptr) return fail(orErrorNotPermitted, "the stream is not capturing");
  *graph = stream->capture.exchange(nullptr);
  return ok();
}

orError_t orGraphLaunch(orGraph_t graph, orStream_t stream) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (graph == nullptr) return fail(orErrorInvalidResourceHandle, "orGraphLaunch: graph is NULL");
  orStream_t s = resolve_stream(stream);
  if (orError_t err = refuse_if_capturing(s, "launching a graph")) return err;
  // One task runs every node in order; kernel nodes keep their access to device memory.
  submit(s, boxed_task(run_graph, graph, TaskKind::Host));
  return config().launch_blocking ? take_stream_error(s) : ok();
}
// LITERALINCLUDE END: DRIVER_GRAPH_CAPTURE

orError_t orStreamIsCapturing(orStream_t stream, int* capturing) {
  if (capturing == nullptr) return fail(orErrorInvalidValue, "orStreamIsCapturing: NULL output");
  *capturing = stream != nullptr && is_capturing(stream) ? 1 : 0;
  return ok();
}

orError_t orGraphGetNodeCount(orGraph_t graph, size_t* count) {
  if (graph == nullptr || count == nullptr) return fail(orErrorInvalidValue, "orGraphGetNodeCount: NULL argument");
  *count = graph->nodes.size();
  return ok();
}

orError_t orGraphDestroy(orGraph_t graph) {
  if (graph == nullptr) return ok();
  // Launches still queued must finish before the nodes' arguments go away.
  if (orError_t err = synchronize_device(graph->device)) return err;
  for (const Task& node : graph->nodes) node.release_arguments();
  delete graph;
  return ok();
}

}  // extern "C"

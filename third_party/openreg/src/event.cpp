// event.cpp: events, markers on a stream that the host and other streams wait for and that time work.
#include "internal.h"

#include <chrono>
#include <memory>
#include <string>
#include <unordered_set>

namespace openreg {

namespace {
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

// Handles come from callers the driver cannot trust: the calls that take an event check it
// against the live ones (an error, never a dereference of garbage), as stream.cpp does for
// streams.
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
}  // namespace

}  // namespace openreg

using namespace openreg;

extern "C" {

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
  state->ticket = submit(s, boxed_task(run_marker, new MarkerArgs{state, generation},
                                       TaskKind::Host, release_args<MarkerArgs>));
  return ok();
}

orError_t orEventQuery(orEvent_t event) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (orError_t err = check_event(event, "orEventQuery")) return err;
  auto& state = *reinterpret_cast<std::shared_ptr<EventState>*>(event);
  std::lock_guard<std::mutex> lock(state->mu);
  if (state->stream == nullptr) return ok();
  return state->stream->completed.load(std::memory_order_acquire) >= state->ticket
             ? orSuccess
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

}  // extern "C"

// internal.h: state shared by the driver's translation units (never installed).
#pragma once

#include "openreg.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace openreg {

// ---- errors ----------------------------------------------------------------
// Records the detail for orGetLastErrorDetail and returns the code.
orError_t fail(orError_t code, const std::string& detail);
inline orError_t ok() { return orSuccess; }

// ---- configuration (read once from the environment) ------------------------
struct Config {
  int device_count = 2;                   // visible devices
  std::vector<int> physical;              // physical id of each visible device
  int physical_count = 2;                 // OPENREG_DEVICE_COUNT; OPENREG_VISIBLE_DEVICES selects
  size_t memory_per_device = 8ull << 30;  // OPENREG_DEVICE_MEMORY (bytes, K/M/G suffix)
  bool launch_blocking = false;           // OPENREG_LAUNCH_BLOCKING=1
};
const Config& config();

int& current_device();  // per thread
orError_t check_device(int device);

// ---- fork safety -----------------------------------------------------------
// Worker threads do not survive fork(). Once the runtime has started (streams
// or device memory exist), a forked child is refused instead of left to hang.
void mark_started();
orError_t check_not_forked();
#define OR_REFUSE_IN_FORKED_CHILD()                                                \
  do {                                                                             \
    if (orError_t forked_err_ = ::openreg::check_not_forked()) return forked_err_; \
  } while (0)

// ---- device memory ---------------------------------------------------------
// LITERALINCLUDE START: DRIVER_MEMORY_VIEWS
// Each device owns one memfd mapped twice: a PROT_NONE device view whose
// addresses are the device pointers handed out, and a read-write kernel view
// used only inside the driver's copies and kernels. Translating is one add.
struct DeviceMemory {
  int fd = -1;
  char* device_base = nullptr;
  char* kernel_base = nullptr;
  size_t capacity = 0;
  std::mutex mu;
  std::map<size_t, size_t> free_ranges;  // offset -> size, coalesced
  std::map<size_t, size_t> allocations;  // offset -> size
  size_t used = 0;

  bool contains(const void* p) const {
    auto c = static_cast<const char*>(p);
    return c >= device_base && c < device_base + capacity;
  }
  char* to_kernel(const void* p) const {
    return kernel_base + (static_cast<const char*>(p) - device_base);
  }
};
// LITERALINCLUDE END: DRIVER_MEMORY_VIEWS

// The device whose view contains p, or -1.
int device_of(const void* p);
DeviceMemory& device_memory(int device);
// Checks that [p, p+count) lies inside one live allocation.
orError_t check_device_range(const void* p, size_t count, const char* what);
bool is_pinned_host(const void* p, size_t count);

// Memory mapped from another process (ipc.cpp). The lookups above fall back
// to these ranges when a pointer is in no local device's view.
int imported_device_of(const void* p);    // -1 if not imported
char* imported_to_kernel(const void* p);  // nullptr if not imported
orError_t check_imported_range(const void* p, size_t count, const char* what);
// The kernel-view address of a device pointer, local or imported (nullptr if neither).
char* kernel_address(const void* p);

// ---- fault injection (faults.cpp) -------------------------------------------
bool fault_due(orFaultKind kind);  // counts one event of this kind; true if it must fail
unsigned stream_delay_us();
// Queues a failure in place of a launch or copy if one is due; true if it did.
bool queue_injected_fault(orStream_t s, orFaultKind kind);

// ---- streams ---------------------------------------------------------------
// LITERALINCLUDE START: DRIVER_TASK
enum class TaskKind : uint8_t { Kernel, Host };
// A task's arguments travel in one of two ways. Boxed: a pointer the launch
// hands over, and `release`, which frees it once the task can never run
// again. Copied: up to OR_LAUNCH_ARGS_MAX bytes copied into the task itself,
// as a GPU copies a kernel's parameters at launch; the task then holds no
// memory of its own, and `fn` gets a pointer to its copy.
struct BoxedArgs {
  void* arg;
  void (*release)(void*);
};
struct Task {
  void (*fn)(void*);
  struct PendingActivity* activity;  // set only while recording (activity.cpp)
  TaskKind kind;
  bool copied;  // which member of `args` holds the arguments
  union {
    BoxedArgs boxed;
    alignas(8) unsigned char bytes[OR_LAUNCH_ARGS_MAX];
  } args;

  void* arguments() { return copied ? static_cast<void*>(args.bytes) : args.boxed.arg; }
  void release_arguments() const {
    if (!copied && args.boxed.release != nullptr) args.boxed.release(args.boxed.arg);
  }
};

inline Task boxed_task(void (*fn)(void*), void* arg, TaskKind kind,
                       void (*release)(void*) = nullptr) {
  Task t{fn, nullptr, kind, false, {}};
  t.args.boxed = BoxedArgs{arg, release};
  return t;
}
// `size` is at most OR_LAUNCH_ARGS_MAX (checked by the caller).
inline Task copied_task(void (*fn)(void*), const void* args, size_t size, TaskKind kind,
                        PendingActivity* activity = nullptr) {
  Task t{fn, activity, kind, true, {}};
  if (size > 0) std::memcpy(t.args.bytes, args, size);
  return t;
}
template <class Args>
Task copied_task(void (*fn)(void*), const Args& args, TaskKind kind,
                 PendingActivity* activity = nullptr) {
  static_assert(std::is_trivially_copyable_v<Args> && sizeof(Args) <= OR_LAUNCH_ARGS_MAX &&
                    alignof(Args) <= 8,
                "copied arguments must be small, plain bytes");
  return copied_task(fn, &args, sizeof(Args), kind, activity);
}
// LITERALINCLUDE END: DRIVER_TASK

// ---- activity records (activity.cpp) -----------------------------------------
// LITERALINCLUDE START: DRIVER_ACTIVITY_OPEN
// A launch made while recording carries a PendingActivity; submit() wraps it.
extern std::atomic<bool> activity_recording;
PendingActivity* activity_open_slow(orStream_t s, orActivityKind kind, size_t bytes,
                                    orMemcpyKind copy_kind);
// nullptr unless recording: the launch path pays one relaxed load.
inline PendingActivity* activity_open(orStream_t s, orActivityKind kind, size_t bytes = 0,
                                      orMemcpyKind copy_kind = orMemcpyHostToHost) {
  if (!activity_recording.load(std::memory_order_relaxed)) return nullptr;
  return activity_open_slow(s, kind, bytes, copy_kind);
}
// A task that runs t stamped with its start and end; the record is stored when it finishes.
Task activity_wrap(const Task& t);
void activity_discard(PendingActivity* a);  // captured into a graph: never recorded
// LITERALINCLUDE END: DRIVER_ACTIVITY_OPEN

}  // namespace openreg

// LITERALINCLUDE START: DRIVER_STREAM_STATE
// A stream queues its tasks in a ring of slots, as a GPU queues commands:
// a launch takes the next ticket with one atomic add, writes the task into
// the ticket's slot and marks it full; the worker takes the slots in ticket
// order and marks each one free for the ticket one lap later. Neither side
// takes a lock. Each group of fields that one side writes at every task
// starts on a cache line of its own: a write to a line the other core holds
// costs a miss.
namespace openreg {
// Twice kMaxPending (stream.cpp), the most tasks a launch lets wait: a launch
// finds its slot free unless many threads launch at once. 128 KiB a stream.
constexpr uint64_t kRingSlots = 2048;

struct alignas(64) RingSlot {
  // The slot holds position p's task (ticket p + 1) when turn == p + 1, and
  // is free for position p when turn == p: the worker frees it for p + kRingSlots.
  std::atomic<uint64_t> turn;
  Task task;
};
static_assert(sizeof(RingSlot) == 64, "a slot is one cache line: turn, then the task");
}  // namespace openreg

struct orStream_st {
  int device = 0;
  int priority = 0;
  bool is_default = false;
  std::thread worker;
  std::condition_variable work_cv;
  std::condition_variable done_cv;
  std::string error;  // first kernel failure since the last synchronize (under mu)
  std::atomic<bool> failed{false};

  // Rarely written: the worker's sleep, capture, shutdown, errors.
  alignas(64) std::mutex mu;
  std::atomic<bool> sleeping{false};        // set under mu; a launch that sees it wakes the worker
  bool stopping = false;                    // under mu
  std::atomic<orGraph_t> capture{nullptr};  // set under mu; while set, launches go to the graph

  // Written by launches: the tickets taken so far, and `completed` when a
  // launch last read it.
  alignas(64) std::atomic<uint64_t> submitted{0};
  std::atomic<uint64_t> seen_completed{0};

  // Written by the worker, read by threads waiting for the stream.
  alignas(64) std::atomic<uint64_t> completed{0};
  std::atomic<int> waiters{0};
  // The lowest ticket a blocked waiter waits for: the worker wakes waiters
  // only once `completed` reaches it, not after every task.
  std::atomic<uint64_t> wake_at{UINT64_MAX};

  openreg::RingSlot ring[openreg::kRingSlots];
  orStream_st() {
    for (uint64_t i = 0; i < openreg::kRingSlots; ++i)
      ring[i].turn.store(i, std::memory_order_relaxed);
  }
};
// LITERALINCLUDE END: DRIVER_STREAM_STATE

// A graph: the device it was captured on and its recorded tasks, replayed in order.
struct orGraph_st {
  int device = 0;
  std::vector<openreg::Task> nodes;
};

namespace openreg {

using Clock = std::chrono::steady_clock;

// Set on a stream's worker thread (stream.cpp), read by the calls a running
// kernel makes (launch.cpp). constinit: no initialization check at each read.
extern constinit thread_local bool in_kernel;
extern constinit thread_local orStream_t running_stream;

void run_task(Task& task);  // on the worker: one task, failures caught
orStream_t default_stream(int device);
// NULL -> the current device's default stream. Inline: every launch resolves its stream.
inline orStream_t resolve_stream(orStream_t stream) {
  return stream != nullptr ? stream : default_stream(current_device());
}
uint64_t submit(orStream_t s, Task t);  // returns the task's ticket (0 if captured)
bool is_capturing(orStream_t s);
orError_t refuse_if_capturing(orStream_t s, const char* what);  // an error while capturing
void wait_for(orStream_t s, uint64_t ticket);
orError_t take_stream_error(orStream_t s);
orError_t synchronize_device(int device);
// Calls fn on every live stream of the device, none of which is destroyed meanwhile.
void for_each_stream(int device, const std::function<void(orStream_t)>& fn);

}  // namespace openreg

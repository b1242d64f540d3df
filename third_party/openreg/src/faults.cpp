// faults.cpp: fault injection, so that tests can watch the backend fail well.
#include "internal.h"

#include <cstdlib>
#include <string>

namespace openreg {
namespace {

struct Plan {
  // Events of this kind seen since the plan was armed, and which ones fail:
  // the nth through the (nth + times - 1)th. nth == 0: disarmed.
  std::atomic<unsigned long> seen{0};
  std::atomic<unsigned long> nth{0};
  std::atomic<unsigned long> times{1};
};

Plan& plan(orFaultKind kind) {
  static Plan plans[3];
  return plans[static_cast<int>(kind)];
}

std::atomic<unsigned> delay_us{0};
std::atomic<bool> any_armed{false};

unsigned long env_count(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::strtoul(v, nullptr, 10) : 0;
}

// The environment arms the plans once, before the first event is counted.
bool armed_from_env = [] {
  const char* names[] = {"OPENREG_FAULT_ALLOC", "OPENREG_FAULT_LAUNCH", "OPENREG_FAULT_COPY"};
  for (int k = 0; k < 3; ++k) {
    if (unsigned long n = env_count(names[k])) orFaultInject(static_cast<orFaultKind>(k), n, 1);
  }
  delay_us = static_cast<unsigned>(env_count("OPENREG_STREAM_DELAY_US"));
  return true;
}();

}  // namespace

// LITERALINCLUDE START: DRIVER_FAULT_DUE
bool fault_due(orFaultKind kind) {
  if (!any_armed.load(std::memory_order_relaxed)) return false;  // the common case: one load
  Plan& p = plan(kind);
  unsigned long nth = p.nth.load();
  if (nth == 0) return false;
  unsigned long index = p.seen.fetch_add(1) + 1;
  return index >= nth && index < nth + p.times.load();
}
// LITERALINCLUDE END: DRIVER_FAULT_DUE

unsigned stream_delay_us() { return delay_us.load(std::memory_order_relaxed); }

// LITERALINCLUDE START: DRIVER_FAULT_QUEUE
// What an injected launch or copy fault queues instead of the work: a failure
// that the stream reports at its next synchronization.
void run_injected_fault(void* what) { orKernelFail(static_cast<const char*>(what)); }
bool queue_injected_fault(orStream_t s, orFaultKind kind) {
  if (!fault_due(kind)) return false;
  submit(s, boxed_task(
                run_injected_fault,
                const_cast<char*>(kind == orFaultCopy ? "injected fault: a copy failed"
                                                      : "injected fault: a kernel launch failed"),
                TaskKind::Kernel));
  return true;
}
// LITERALINCLUDE END: DRIVER_FAULT_QUEUE

}  // namespace openreg

using namespace openreg;

extern "C" {

orError_t orFaultInject(orFaultKind kind, unsigned long nth, unsigned long times) {
  if (kind < orFaultAlloc || kind > orFaultCopy)
    return fail(orErrorInvalidValue, "orFaultInject: unknown fault kind");
  if (nth > 0 && times == 0)
    return fail(orErrorInvalidValue, "orFaultInject: times must be at least 1");
  Plan& p = plan(kind);
  p.nth = 0;  // disarm while the plan changes
  p.seen = 0;
  p.times = times;
  p.nth = nth;
  bool any = false;
  for (int k = 0; k < 3; ++k) any = any || plan(static_cast<orFaultKind>(k)).nth.load() != 0;
  any_armed = any;
  return ok();
}

orError_t orFaultSetStreamDelay(unsigned microseconds) {
  if (microseconds > 10'000'000)
    return fail(orErrorInvalidValue, "orFaultSetStreamDelay: at most 10 s per task");
  delay_us = microseconds;
  return ok();
}

}  // extern "C"

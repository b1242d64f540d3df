// OpenRegProfilerStubs.cpp: the legacy profiler's device timing (use_device="openreg") on openreg events.
#include <c10/core/DeviceGuard.h>
#include <c10/util/ApproximateClock.h>
#include <openreg.h>
#include <torch/csrc/profiler/stubs/base.h>

#include "runtime/OpenRegException.h"
#include "runtime/OpenRegFunctions.h"
#include "runtime/OpenRegStream.h"

namespace c10::openreg {
namespace {

// LITERALINCLUDE START: PROFILING_STUBS_CLASS
using torch::profiler::impl::ProfilerVoidEventStub;

// The legacy profiler brackets every operator with two record() calls and,
// after the run, asks elapsed() for the device time between them: an event
// recorded on the current stream marks where the operator's work begins and
// ends in the stream's order.
struct OpenRegProfilerStubs final : torch::profiler::impl::ProfilerStubs {
  void record(DeviceIndex* device, ProfilerVoidEventStub* event, int64_t* cpu_ns) const override {
    DeviceIndex index = current_device();
    if (device != nullptr) *device = index;
    orEvent_t e = nullptr;
    OPENREG_CHECK(orEventCreate(&e));
    *event = std::shared_ptr<void>(e, [](void* p) { orEventDestroy(static_cast<orEvent_t>(p)); });
    if (cpu_ns != nullptr) *cpu_ns = c10::getTime();
    OPENREG_CHECK(orEventRecord(e, getCurrentOpenRegStream(index).stream()));
  }

  // Microseconds, as the CUDA stubs return: the two markers' stamps, taken by
  // the stream's worker when it reached them.
  float elapsed(const ProfilerVoidEventStub* start,
                const ProfilerVoidEventStub* end) const override {
    auto a = static_cast<orEvent_t>(start->get());
    auto b = static_cast<orEvent_t>(end->get());
    OPENREG_CHECK(orEventSynchronize(a));
    OPENREG_CHECK(orEventSynchronize(b));
    return static_cast<float>(event_elapsed_time(a, b) * 1000.0);
  }

  // Called once before profiling starts, so every device's streams exist and
  // the first operator does not pay for creating them.
  void onEachDevice(std::function<void(int)> op) const override {
    for (DeviceIndex d = 0; d < device_count(); ++d) {
      c10::DeviceGuard guard(Device(DeviceType::PrivateUse1, d));
      op(d);
    }
  }

  void synchronize() const override {
    for (DeviceIndex d = 0; d < device_count(); ++d) synchronize_device(d);
  }

  bool enabled() const override { return true; }

  // Named ranges have no device-side viewer here (CUDA sends them to NVTX).
  void mark(const char*) const override {}
  void rangePush(const char*) const override {}
  void rangePop() const override {}
};

// Registered when the library loads, as the CUDA stubs are when libtorch_cuda loads.
struct RegisterStubs {
  RegisterStubs() {
    static OpenRegProfilerStubs stubs;
    torch::profiler::impl::registerPrivateUse1Methods(&stubs);
  }
} register_stubs;
// LITERALINCLUDE END: PROFILING_STUBS_CLASS

}  // namespace
}  // namespace c10::openreg

// OpenRegActivityProfiler.cpp: a Kineto activity profiler that turns the driver's activity records into trace rows.
#include <IActivityProfiler.h>
#include <libkineto.h>
#include <openreg.h>
#include <output_base.h>
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/OpenRegStream.h"

namespace c10::openreg {
namespace {

int64_t system_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

using libkineto::ActivityType;

// What a record is called in the trace: a kernel after the operator that
// launched it, copies and memsets as CUDA's are ("Memcpy HtoD").
std::string activity_name(const orActivityRecord& r, const libkineto::ITraceActivity* op) {
  switch (r.kind) {
    case orActivityKindKernel:
      return op != nullptr ? op->name() + " kernel" : std::string("openreg kernel");
    case orActivityKindMemcpy: {
      static const char* kinds[] = {"HtoH", "HtoD", "DtoH", "DtoD"};
      return std::string("Memcpy ") + kinds[r.memcpy_kind] + " (openreg)";
    }
    case orActivityKindMemset: return "Memset (openreg)";
  }
  return "openreg activity";
}

ActivityType activity_type(const orActivityRecord& r) {
  switch (r.kind) {
    case orActivityKindMemcpy: return ActivityType::GPU_MEMCPY;
    case orActivityKindMemset: return ActivityType::GPU_MEMSET;
    default: return ActivityType::CONCURRENT_KERNEL;
  }
}

// The trace row of a stream: PyTorch's StreamId for it (0 is the default
// stream), so rows match torch.openreg.Stream.stream_id.
int64_t stream_row(const orActivityRecord& r) {
  if (r.default_stream != 0) return 0;
  if (auto id = find_stream_id(static_cast<DeviceIndex>(r.device), r.stream)) return *id;
  return -1;  // a driver stream PyTorch never saw
}

// LITERALINCLUDE START: PROFILING_KINETO_SESSION
// One profiling run. Kineto calls start() and stop() around the run, and
// pushCorrelationId()/popCorrelationId() on the launching thread around every
// operator: the driver tags each launch with the id on top, and processTrace()
// turns the id back into the operator through getLinkedActivity.
class OpenRegActivitySession final : public libkineto::IActivityProfilerSession {
 public:
  explicit OpenRegActivitySession(bool record) : record_(record) {}

  void start() override {
    if (!record_) return;
    uint64_t driver_now = 0;
    orActivityGetTimestamp(&driver_now);
    clock_offset_ns_ = system_now_ns() - static_cast<int64_t>(driver_now);
    orActivityEnable(1);
    status_ = libkineto::TraceStatus::RECORDING;
  }

  // The profiler synchronizes the device before stopping; work still running
  // now is not in this trace.
  void stop() override {
    if (!record_) return;
    orActivityFlush(&OpenRegActivitySession::collect, this);
    orActivityEnable(0);
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  void pushCorrelationId(uint64_t id) override {
    if (record_) orActivityPushExternalCorrelationId(id);
  }
  void popCorrelationId() override {
    if (record_) orActivityPopExternalCorrelationId(nullptr);
  }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(logger, [](int32_t) { return nullptr; }, 0, 0);
  }

  void processTrace(libkineto::ActivityLogger& logger,
                    libkineto::getLinkedActivityCallback get_linked, int64_t start_ns,
                    int64_t end_ns) override {
    buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
    buffer_->span = libkineto::TraceSpan(start_ns, end_ns, "openreg");
    buffer_->gpuOpCount = 0;
    std::map<int, std::set<int64_t>> rows;  // device -> streams seen
    for (const orActivityRecord& r : records_) {
      auto& a = *buffer_->activities.emplace_back(
          std::make_unique<libkineto::GenericTraceActivity>(buffer_->span, activity_type(r), ""));
      const libkineto::ITraceActivity* op =
          r.external_id != 0 ? get_linked(static_cast<int32_t>(r.external_id)) : nullptr;
      a.activityName = activity_name(r, op);
      a.startTime = static_cast<int64_t>(r.start_ns) + clock_offset_ns_;
      a.endTime = static_cast<int64_t>(r.end_ns) + clock_offset_ns_;
      a.id = static_cast<int32_t>(r.correlation_id);
      a.device = r.device;
      a.resource = static_cast<int32_t>(stream_row(r));
      a.linked = op;  // how PyTorch attributes device time to the operator
      a.addMetadata("device", r.device);
      a.addMetadata("stream", a.resource);
      a.addMetadata("correlation", r.correlation_id);
      if (r.kind != orActivityKindKernel) a.addMetadata("bytes", r.bytes);
      rows[r.device].insert(a.resource);
      buffer_->gpuOpCount++;
    }
    // One process per device, one row per stream, named in the trace.
    for (const auto& [device, streams] : rows) {
      logger.handleDeviceInfo({device, device, "openreg " + std::to_string(device),
                               "openreg:" + std::to_string(device)},
                              start_ns);
      for (int64_t s : streams) {
        logger.handleResourceInfo({s, s, device, "stream " + std::to_string(s)}, start_ns);
      }
    }
    for (const auto& a : buffer_->activities) a->log(logger);
    status_ = libkineto::TraceStatus::READY;
  }

  std::vector<std::string> errors() override { return {}; }
  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override { return nullptr; }
  std::vector<libkineto::ResourceInfo> getResourceInfos() override { return {}; }
  // Kineto keeps the activities alive as long as the trace that logged them.
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return std::move(buffer_);
  }

 private:
  static void collect(const orActivityRecord* records, size_t count, void* self) {
    auto& out = static_cast<OpenRegActivitySession*>(self)->records_;
    out.insert(out.end(), records, records + count);
  }

  bool record_;                  // false: a CPU-only profile, nothing to do
  int64_t clock_offset_ns_ = 0;  // system clock minus the driver's clock
  std::vector<orActivityRecord> records_;
  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
};
// LITERALINCLUDE END: PROFILING_KINETO_SESSION

// LITERALINCLUDE START: PROFILING_KINETO_PROFILER
// The factory Kineto asks for a session whenever a profile includes
// ProfilerActivity.PrivateUse1 (ProfilerActivity.OPENREG).
class OpenRegActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }

  const std::set<ActivityType>& availableActivities() const override { return activities_; }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<ActivityType>& types, const libkineto::Config&) override {
    // Kineto configures every plugin for every profile, CPU-only ones too; record
    // only when the profile asked for device activities.
    bool wanted = false;
    for (ActivityType t : activities_) wanted = wanted || types.count(t) > 0;
    return std::make_unique<OpenRegActivitySession>(wanted);
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t, int64_t, const std::set<ActivityType>& types,
      const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_{"openreg"};
  std::set<ActivityType> activities_{ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY,
                                     ActivityType::GPU_MEMSET};
};

REGISTER_PRIVATEUSE1_PROFILER(OpenRegActivityProfiler);
// LITERALINCLUDE END: PROFILING_KINETO_PROFILER

}  // namespace
}  // namespace c10::openreg

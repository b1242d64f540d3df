// OpenRegGraph.cpp: torch.accelerator.Graph on openreg: capture a stream's work, replay it.
#include <ATen/core/GraphImplInterface.h>
#include <c10/core/DeviceGuard.h>

#include <atomic>
#include <fstream>

#include "OpenRegDeviceAllocator.h"
#include "OpenRegException.h"
#include "OpenRegStream.h"

namespace c10::openreg {

namespace {
MempoolId_t new_pool_id() {
  static std::atomic<CaptureId_t> next{1};
  return {next++, 0};
}
}  // namespace

// LITERALINCLUDE START: GRAPH_IMPL
struct OpenRegGraph final : public at::GraphImplInterface {
  explicit OpenRegGraph(const at::GraphImplArgs&) {}
  ~OpenRegGraph() override { reset(); }

  void capture_begin(MempoolId_t pool, at::GraphCaptureMode) override {
    TORCH_CHECK(graph_ == nullptr && !capturing_, "this graph holds a capture already: reset() it");
    OpenRegStream stream = getCurrentOpenRegStream();
    TORCH_CHECK(stream.id() != 0,
                "openreg cannot capture the default stream: capture inside "
                "`with torch.Stream(device='openreg'):`");
    stream_ = stream.unwrap();
    pool_ = pool.first == 0 && pool.second == 0 ? new_pool_id() : pool;
    c10::DeviceGuard guard(stream.device());
    device_allocator()->beginAllocateToPool(stream.device_index(), pool_, stream.id());
    orError_t err = orStreamBeginCapture(stream.stream());
    if (err != orSuccess) device_allocator()->endAllocateToPool(stream.device_index());
    OPENREG_CHECK(err);
    capturing_ = true;
  }

  void capture_end() override {
    TORCH_CHECK(capturing_, "capture_end() without capture_begin()");
    OpenRegStream stream(stream_);
    c10::DeviceGuard guard(stream.device());
    capturing_ = false;
    device_allocator()->endAllocateToPool(stream.device_index());
    OPENREG_CHECK(orStreamEndCapture(stream.stream(), &graph_));
  }

  void instantiate() override {
    TORCH_CHECK(graph_ != nullptr, "capture a graph before instantiating it");  // replayable as is
  }

  void replay() override {
    TORCH_CHECK(graph_ != nullptr, "capture a graph before replaying it");
    c10::DeviceGuard guard(stream_.device());
    OPENREG_CHECK(orGraphLaunch(graph_, getCurrentOpenRegStream().stream()));
  }

  void reset() override {
    if (graph_ == nullptr) return;
    c10::DeviceGuard guard(stream_.device());
    OPENREG_CHECK(orGraphDestroy(graph_));  // waits for queued replays
    graph_ = nullptr;
    device_allocator()->releasePool(stream_.device_index(), pool_);
  }

  MempoolId_t pool() const override { return pool_; }

  void enable_debug_mode() override { debug_ = true; }

  void debug_dump(const std::string& path) override {
    TORCH_CHECK(debug_, "call enable_debug_mode() before debug_dump()");
    TORCH_CHECK(graph_ != nullptr, "capture a graph before dumping it");
    size_t nodes = 0;
    OPENREG_CHECK(orGraphGetNodeCount(graph_, &nodes));
    std::ofstream out(path);
    out << "digraph openreg_graph {\n";  // the nodes run in capture order
    for (size_t i = 0; i + 1 < nodes; ++i) out << "  n" << i << " -> n" << i + 1 << ";\n";
    if (nodes == 1) out << "  n0;\n";
    out << "}\n";
  }

 private:
  c10::Stream stream_{c10::Stream::DEFAULT, c10::Device(c10::DeviceType::PrivateUse1, 0)};
  MempoolId_t pool_{0, 0};
  orGraph_t graph_ = nullptr;
  bool capturing_ = false;
  bool debug_ = false;
};

// LITERALINCLUDE END: GRAPH_IMPL

}  // namespace c10::openreg

// LITERALINCLUDE START: GRAPH_REGISTER
// The registry is keyed by the device type's upper-case name: "OPENREG" once
// the backend is named (the hooks name it when the library loads).
namespace at {
REGISTER_GRAPH_IMPL(OPENREG, c10::openreg::OpenRegGraph);
}  // namespace at
// LITERALINCLUDE END: GRAPH_REGISTER

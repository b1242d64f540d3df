// graph_test.cpp: graphs: work captured from a stream instead of run, replayed, released once.
#include "driver_test.h"

#include <atomic>
#include <cstdint>
#include <vector>

namespace {

struct Graph : DriverTest {};

TEST_F(Graph, CaptureAndReplay) {
  static std::atomic<int> runs{0}, releases{0};
  runs = 0;
  releases = 0;
  orStream_t s;
  ASSERT_OK(orStreamCreate(&s));
  EXPECT_EQ(orStreamBeginCapture(nullptr), orErrorNotPermitted);  // not the default stream
  ASSERT_OK(orStreamBeginCapture(s));
  EXPECT_EQ(orStreamBeginCapture(s), orErrorNotPermitted);  // already capturing
  int capturing = 0;
  EXPECT_OK(orStreamIsCapturing(s, &capturing));
  EXPECT_EQ(capturing, 1);
  EXPECT_OK(orLaunchKernelEx(s, [](void*) { runs++; }, nullptr, [](void*) { releases++; }));
  void* dev = nullptr;
  ASSERT_OK(orMalloc(&dev, 64));
  EXPECT_OK(orMemsetAsync(dev, 7, 64, s));
  // What would wait for work that only runs at replay is refused.
  EXPECT_EQ(orStreamSynchronize(s), orErrorNotPermitted);
  std::vector<char> host(64);
  EXPECT_EQ(orMemcpyAsync(host.data(), dev, 64, orMemcpyDeviceToHost, s), orErrorNotPermitted);
  orGraph_t graph = nullptr;
  ASSERT_OK(orStreamEndCapture(s, &graph));
  EXPECT_EQ(orStreamEndCapture(s, &graph), orErrorNotPermitted);  // no longer capturing
  EXPECT_OK(orStreamIsCapturing(s, &capturing));
  EXPECT_EQ(capturing, 0);
  size_t nodes = 0;
  EXPECT_OK(orGraphGetNodeCount(graph, &nodes));
  EXPECT_EQ(nodes, 2u);
  EXPECT_OK(orStreamSynchronize(s));
  EXPECT_EQ(runs, 0);  // captured, not run
  for (int i = 0; i < 3; ++i) EXPECT_OK(orGraphLaunch(graph, s));
  EXPECT_OK(orStreamSynchronize(s));
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(releases, 0);  // a replay does not release what a later replay needs
  EXPECT_OK(orMemcpy(host.data(), dev, 64, orMemcpyDeviceToHost));
  EXPECT_EQ(host[0], 7);
  EXPECT_EQ(host[63], 7);
  EXPECT_OK(orGraphDestroy(graph));
  EXPECT_EQ(releases, 1);
  EXPECT_OK(orFree(dev));
  EXPECT_OK(orStreamDestroy(s));
}

struct Args {
  int64_t values[3];
  int64_t calls;  // the kernel counts in its own copy
};
std::vector<int64_t> seen;  // written only by the stream's worker

TEST_F(Graph, EveryReplayStartsFromTheArgumentsAsLaunched) {
  orStream_t s;
  ASSERT_OK(orStreamCreate(&s));
  Args captured{{4, 5, 6}, 0};
  ASSERT_OK(orStreamBeginCapture(s));
  auto record = [](void* p) {
    auto* a = static_cast<Args*>(p);
    a->calls++;
    seen.push_back(a->values[0] + a->values[1] + a->values[2] + 1000 * a->calls);
  };
  EXPECT_OK(orLaunchKernelWithArgs(s, record, &captured, sizeof(captured)));
  orGraph_t graph = nullptr;
  ASSERT_OK(orStreamEndCapture(s, &graph));
  seen.clear();
  for (int i = 0; i < 3; ++i) EXPECT_OK(orGraphLaunch(graph, s));
  EXPECT_OK(orStreamSynchronize(s));
  EXPECT_EQ(seen, (std::vector<int64_t>{1015, 1015, 1015}));
  EXPECT_OK(orGraphDestroy(graph));
  EXPECT_OK(orStreamDestroy(s));
}

}  // namespace

// stream_test.cpp: streams and launches: order, asynchrony, kernel failures, arguments, many launching threads.
#include "driver_test.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

struct Stream : DriverTest {};
struct Launch : DriverTest {};
struct Activity : DriverTest {};

TEST_F(Stream, CreateWithPriorityAndDestroy) {
  int least = 1, greatest = 1;
  ASSERT_OK(orDeviceGetStreamPriorityRange(&least, &greatest));
  EXPECT_EQ(least, 0);
  EXPECT_EQ(greatest, -1);
  orStream_t a, b;
  ASSERT_OK(orStreamCreate(&a));
  ASSERT_OK(orStreamCreateWithPriority(&b, -1));
  EXPECT_EQ(orStreamCreateWithPriority(&b, 5), orErrorInvalidValue);
  int priority = 0, device = -1;
  EXPECT_OK(orStreamGetPriority(b, &priority));
  EXPECT_EQ(priority, -1);
  EXPECT_OK(orStreamGetDevice(a, &device));
  EXPECT_EQ(device, 0);
  EXPECT_OK(orStreamDestroy(a));
  EXPECT_OK(orStreamDestroy(b));
  EXPECT_EQ(orStreamDestroy(nullptr), orErrorInvalidResourceHandle);  // a default stream
}

TEST_F(Stream, LaunchIsAsynchronousAndOrdered) {
  std::atomic<bool> released{false};
  std::vector<int> order;
  launch(nullptr, [&] {
    while (!released.load()) std::this_thread::yield();
    order.push_back(1);
  });
  launch(nullptr, [&] { order.push_back(2); });
  EXPECT_EQ(orStreamQuery(nullptr), orErrorNotReady);  // returned before the work ran
  released = true;
  EXPECT_OK(orStreamSynchronize(nullptr));
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_OK(orStreamQuery(nullptr));
}

TEST_F(Stream, LaunchesFromSeveralThreadsKeepEachThreadsOrderPastTheRing) {
  orStream_t s;
  ASSERT_OK(orStreamCreate(&s));
  static std::atomic<bool> released{false};
  released = false;
  // The worker is held at the first task: the launches below fill the
  // stream, wait for room, and run once it is released.
  launch(s, [] {
    while (!released.load()) std::this_thread::yield();
  });
  constexpr int kThreads = 4, kEach = 3000;
  static std::vector<int> ran;  // written only by the stream's worker
  ran.clear();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([s, t] {
      for (int i = 0; i < kEach; ++i) {
        orLaunchKernelEx(
            s, [](void* p) { ran.push_back(static_cast<int>(reinterpret_cast<intptr_t>(p))); },
            reinterpret_cast<void*>(static_cast<intptr_t>(t * kEach + i)), nullptr);
      }
    });
  }
  sleep_ms(50);
  released = true;
  for (auto& th : threads) th.join();
  EXPECT_OK(orStreamSynchronize(s));
  ASSERT_EQ(ran.size(), static_cast<size_t>(kThreads * kEach));
  std::vector<int> next(kThreads, 0);
  for (int v : ran) {
    ASSERT_EQ(v % kEach, next[v / kEach]);  // each thread's launches in the order it made them
    next[v / kEach]++;
  }
  EXPECT_OK(orStreamDestroy(s));
}

// The worker calls the idle callback on its own thread once it has had no
// work for the time given, once per idle stretch, and never while it has work.
std::atomic<int> idle_calls{0};
std::atomic<std::thread::id> idle_thread{};

TEST_F(Stream, AnIdleWorkerCallsTheIdleCallbackOnItsThread) {
  orStream_t s;
  ASSERT_OK(orStreamCreate(&s));
  EXPECT_EQ(orSetWorkerIdleCallback(nullptr, 2'000'000), orErrorInvalidValue);
  ASSERT_OK(orSetWorkerIdleCallback(
      [] {
        idle_thread = std::this_thread::get_id();
        idle_calls++;
      },
      20'000));
  std::atomic<std::thread::id> worker{};
  for (int stretch = 1; stretch <= 2; ++stretch) {
    launch(s, [&] { worker = std::this_thread::get_id(); });
    EXPECT_OK(orStreamSynchronize(s));
    sleep_ms(200);  // far past the 20 ms: the worker calls it once, then sleeps on
    EXPECT_EQ(idle_calls, stretch);
  }
  EXPECT_EQ(idle_thread.load(), worker.load());
  // A busy worker never calls it: kernels that follow each other closely.
  int before = idle_calls;
  for (int i = 0; i < 200; ++i) launch(s, [] {});
  EXPECT_OK(orStreamSynchronize(s));
  EXPECT_EQ(idle_calls, before);
  ASSERT_OK(orSetWorkerIdleCallback(nullptr, 0));
  EXPECT_OK(orStreamDestroy(s));
}

TEST_F(Stream, ATaskLaunchingOnItsOwnStream) {
  orStream_t s;
  ASSERT_OK(orStreamCreate(&s));
  struct Self {
    orStream_t stream;
    int launches;
    std::atomic<int> runs{0};
  };
  auto launch_on_own_stream = [](void* p) {
    auto* self = static_cast<Self*>(p);
    for (int i = 0; i < self->launches; ++i) {
      orLaunchKernelEx(self->stream, [](void* q) { static_cast<Self*>(q)->runs++; }, self, nullptr);
    }
  };
  Self few{s, 10};
  EXPECT_OK(orLaunchHostFunc(s, launch_on_own_stream, &few));
  // A synchronize waits for the work queued before it: the host function.
  // The second one waits for what the host function queued.
  EXPECT_OK(orStreamSynchronize(s));
  EXPECT_OK(orStreamSynchronize(s));
  EXPECT_EQ(few.runs, 10);
  // More than the stream holds: the worker cannot wait for itself, so the
  // launches past the last free slot fail, reported at the next synchronize.
  Self many{s, 5000};
  EXPECT_OK(orLaunchHostFunc(s, launch_on_own_stream, &many));
  EXPECT_EQ(orStreamSynchronize(s), orErrorLaunchFailure);
  EXPECT_NE(std::strstr(orGetLastErrorDetail(), "its own stream"), nullptr);
  // The error was reported once; this synchronize waits for the launches
  // that fitted.
  EXPECT_OK(orStreamSynchronize(s));
  EXPECT_GT(many.runs, 1000);
  EXPECT_LT(many.runs, 5000);
  EXPECT_OK(orStreamDestroy(s));
}

TEST_F(Launch, KernelsSeeDeviceMemoryThroughTheKernelView) {
  void* dev = nullptr;
  ASSERT_OK(orMalloc(&dev, 4 * 64));
  EXPECT_OK(orMemset(dev, 0, 4 * 64));
  launch(nullptr, [dev] {
    float* k = kernel_view(dev);
    for (int i = 0; i < 64; ++i) k[i] = static_cast<float>(i);
  });
  float out[64];
  EXPECT_OK(orMemcpy(out, dev, sizeof(out), orMemcpyDeviceToHost));
  EXPECT_EQ(out[0], 0.f);
  EXPECT_EQ(out[63], 63.f);
  EXPECT_OK(orFree(dev));
}

TEST_F(Launch, KernelFailureIsReportedAtSynchronizeOnce) {
  launch(nullptr, [] { orKernelFail("index 7 is out of bounds"); });
  EXPECT_EQ(orStreamSynchronize(nullptr), orErrorLaunchFailure);
  EXPECT_NE(std::strstr(orGetLastErrorDetail(), "index 7"), nullptr);
  EXPECT_OK(orStreamSynchronize(nullptr));
  EXPECT_EQ(orKernelFail("not in a kernel"), orErrorNotPermitted);
}

struct Args {
  int64_t values[3];
  int64_t calls;  // the kernel counts in its own copy
};
static_assert(sizeof(Args) == OR_LAUNCH_ARGS_MAX, "the largest copy the driver takes");
std::vector<int64_t> seen;  // written only by a stream's worker
void record(void* p) {
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 8, 0u);
  auto* a = static_cast<Args*>(p);
  a->calls++;
  seen.push_back(a->values[0] + a->values[1] + a->values[2] + 1000 * a->calls);
}

TEST_F(Launch, ALaunchCopiesItsArguments) {
  seen.clear();
  orStream_t s;
  ASSERT_OK(orStreamCreate(&s));
  static std::atomic<bool> released{false};
  released = false;
  launch(s, [] {
    while (!released.load()) std::this_thread::yield();
  });  // holds the worker
  Args args{{1, 2, 3}, 0};
  EXPECT_OK(orLaunchKernelWithArgs(s, record, &args, sizeof(args)));
  args.values[0] = 10;  // the caller's buffer is its own again at once
  EXPECT_OK(orLaunchKernelWithArgs(s, record, &args, sizeof(args)));
  std::memset(&args, 0xff, sizeof(args));
  EXPECT_OK(orLaunchKernelWithArgs(s, [](void*) { seen.push_back(-1); }, nullptr, 0));
  released = true;
  EXPECT_OK(orStreamSynchronize(s));
  EXPECT_EQ(seen, (std::vector<int64_t>{1006, 1015, -1}));
  EXPECT_OK(orStreamDestroy(s));
}

TEST_F(Launch, WhatALaunchRefuses) {
  seen.clear();
  orStream_t s;
  ASSERT_OK(orStreamCreate(&s));
  Args args{{4, 5, 6}, 0};
  unsigned char big[OR_LAUNCH_ARGS_MAX + 1] = {};
  EXPECT_EQ(orLaunchKernelWithArgs(s, record, big, sizeof(big)), orErrorInvalidValue);
  EXPECT_NE(std::strstr(orGetLastErrorDetail(), "OR_LAUNCH_ARGS_MAX"), nullptr);
  EXPECT_EQ(orLaunchKernelWithArgs(s, record, nullptr, 8), orErrorInvalidValue);
  EXPECT_EQ(orLaunchKernelWithArgs(s, nullptr, &args, sizeof(args)), orErrorInvalidValue);
  EXPECT_EQ(orLaunchKernel(s, nullptr, nullptr), orErrorInvalidValue);
  EXPECT_EQ(orLaunchHostFunc(s, nullptr, nullptr), orErrorInvalidValue);
  EXPECT_OK(orStreamSynchronize(s));
  EXPECT_TRUE(seen.empty());  // nothing refused ran
  EXPECT_OK(orStreamDestroy(s));
}

// Recorded for a profiler: the record wraps the launch, the kernel still gets
// its arguments, and each kernel, copy and memset leaves one record.
TEST_F(Activity, RecordsWrapLaunchesAndCopies) {
  seen.clear();
  orStream_t s;
  ASSERT_OK(orStreamCreate(&s));
  void* dev = nullptr;
  ASSERT_OK(orMalloc(&dev, 64));
  float host[16] = {};
  Args args{{4, 5, 6}, 0};
  ASSERT_OK(orActivityEnable(1));
  EXPECT_OK(orLaunchKernelWithArgs(s, record, &args, sizeof(args)));
  EXPECT_OK(orMemsetAsync(dev, 0, 64, s));
  EXPECT_OK(orMemcpyAsync(host, dev, 64, orMemcpyDeviceToHost, s));
  EXPECT_OK(orStreamSynchronize(s));
  EXPECT_OK(orActivityEnable(0));
  EXPECT_EQ(seen, (std::vector<int64_t>{1015}));
  std::vector<orActivityRecord> records;
  EXPECT_OK(orActivityFlush(
      [](const orActivityRecord* r, size_t n, void* out) {
        static_cast<std::vector<orActivityRecord>*>(out)->insert(
            static_cast<std::vector<orActivityRecord>*>(out)->end(), r, r + n);
      },
      &records));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].kind, orActivityKindKernel);
  EXPECT_EQ(records[1].kind, orActivityKindMemset);
  EXPECT_EQ(records[2].kind, orActivityKindMemcpy);
  EXPECT_EQ(records[2].bytes, 64u);
  for (const orActivityRecord& r : records) {
    EXPECT_EQ(r.stream, s);
    EXPECT_LE(r.start_ns, r.end_ns);
  }
  EXPECT_OK(orFree(dev));
  EXPECT_OK(orStreamDestroy(s));
}

}  // namespace

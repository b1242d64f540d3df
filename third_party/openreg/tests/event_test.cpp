// event_test.cpp: events: completion, host waits, one stream waiting for another, timing.
#include "driver_test.h"

#include <atomic>

namespace {

struct Event : DriverTest {};

TEST_F(Event, TimeWorkAndOrderStreams) {
  orStream_t a, b;
  orEvent_t start, stop, done;
  ASSERT_OK(orStreamCreate(&a));
  ASSERT_OK(orStreamCreateWithPriority(&b, -1));
  ASSERT_OK(orEventCreate(&start));
  ASSERT_OK(orEventCreate(&stop));
  ASSERT_OK(orEventCreateWithFlags(&done, orEventDisableTiming));
  EXPECT_OK(orEventQuery(done));  // never recorded: complete
  std::atomic<int> step{0};
  EXPECT_OK(orEventRecord(start, a));
  launch(a, [&] {
    sleep_ms(40);
    step = 1;
  });
  EXPECT_OK(orEventRecord(stop, a));
  EXPECT_OK(orEventRecord(done, a));
  EXPECT_EQ(orEventQuery(stop), orErrorNotReady);
  EXPECT_OK(orStreamWaitEvent(b, done));
  int seen = -1;
  launch(b, [&] { seen = step.load(); });
  EXPECT_OK(orStreamSynchronize(b));
  EXPECT_EQ(seen, 1);  // b waited for a
  EXPECT_OK(orEventSynchronize(stop));
  EXPECT_OK(orEventQuery(stop));
  float ms = 0;
  EXPECT_OK(orEventElapsedTime(&ms, start, stop));
  EXPECT_GE(ms, 39.f);
  EXPECT_LT(ms, 80.f);
  EXPECT_EQ(orEventElapsedTime(&ms, start, done), orErrorInvalidResourceHandle);  // no timing
  EXPECT_OK(orEventDestroy(start));
  EXPECT_OK(orEventDestroy(stop));
  EXPECT_OK(orEventDestroy(done));
  EXPECT_OK(orStreamDestroy(a));
  EXPECT_OK(orStreamDestroy(b));
}

TEST_F(Event, ReRecordingMovesTheEvent) {
  orStream_t s;
  orEvent_t e;
  ASSERT_OK(orStreamCreate(&s));
  ASSERT_OK(orEventCreate(&e));
  std::atomic<bool> released{false};
  EXPECT_OK(orEventRecord(e, s));
  EXPECT_OK(orEventSynchronize(e));
  launch(s, [&] {
    while (!released.load()) std::this_thread::yield();
  });
  EXPECT_OK(orEventRecord(e, s));  // now behind the held kernel
  EXPECT_EQ(orEventQuery(e), orErrorNotReady);
  released = true;
  EXPECT_OK(orEventSynchronize(e));
  EXPECT_OK(orEventQuery(e));
  EXPECT_OK(orEventDestroy(e));
  EXPECT_OK(orStreamDestroy(s));
}

}  // namespace

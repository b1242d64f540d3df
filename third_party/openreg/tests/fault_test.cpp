// fault_test.cpp: errors and faults: error strings, untrusted handles, injected faults, forked children.
#include "driver_test.h"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace {

struct Error : DriverTest {};
struct Fault : DriverTest {};
struct ForkDeathTest : DriverTest {};

TEST_F(Error, Strings) {
  EXPECT_STREQ(orGetErrorString(orSuccess), "no error");
  EXPECT_STREQ(orGetErrorString(orErrorMemoryAllocation), "out of memory");
  EXPECT_STREQ(orGetErrorString(static_cast<orError_t>(999)), "unrecognized error code");
}

TEST_F(Error, HandlesFromOutsideAreCheckedNeverDereferenced) {
  auto* garbage_event = reinterpret_cast<orEvent_t>(uintptr_t{99});
  auto* garbage_stream = reinterpret_cast<orStream_t>(uintptr_t{99});
  float ms = 0;
  int device = -1;
  EXPECT_EQ(orEventQuery(garbage_event), orErrorInvalidResourceHandle);
  EXPECT_EQ(orEventElapsedTime(&ms, garbage_event, garbage_event), orErrorInvalidResourceHandle);
  EXPECT_EQ(orEventDestroy(garbage_event), orErrorInvalidResourceHandle);
  EXPECT_EQ(orStreamSynchronize(garbage_stream), orErrorInvalidResourceHandle);
  EXPECT_EQ(orStreamGetDevice(garbage_stream, &device), orErrorInvalidResourceHandle);
  orEvent_t e;
  ASSERT_OK(orEventCreate(&e));
  EXPECT_OK(orEventDestroy(e));
  EXPECT_EQ(orEventQuery(e), orErrorInvalidResourceHandle);  // destroyed: no longer live
}

TEST_F(Fault, InjectedFaultsFailTheNthEventThenStop) {
  void* dev = nullptr;
  ASSERT_OK(orFaultInject(orFaultAlloc, 2, 1));
  ASSERT_OK(orMalloc(&dev, 256));  // the 1st: fine
  void* second = nullptr;
  EXPECT_EQ(orMalloc(&second, 256), orErrorMemoryAllocation);  // the 2nd: refused
  EXPECT_NE(std::strstr(orGetLastErrorDetail(), "injected fault"), nullptr);
  ASSERT_OK(orMalloc(&second, 256));  // the 3rd: fine again
  ASSERT_OK(orFaultInject(orFaultLaunch, 1, 1));
  std::atomic<bool> ran{false};
  launch(nullptr, [&] { ran = true; });
  EXPECT_EQ(orStreamSynchronize(nullptr), orErrorLaunchFailure);
  EXPECT_FALSE(ran.load());  // the kernel never ran
  float host[4] = {1, 2, 3, 4};
  ASSERT_OK(orFaultInject(orFaultCopy, 1, 1));
  EXPECT_EQ(orMemcpy(dev, host, sizeof host, orMemcpyHostToDevice), orErrorLaunchFailure);
  EXPECT_OK(orMemcpy(dev, host, sizeof host, orMemcpyHostToDevice));
  EXPECT_EQ(orFaultInject(static_cast<orFaultKind>(7), 1, 1), orErrorInvalidValue);
  EXPECT_OK(orFree(dev));
  EXPECT_OK(orFree(second));
}

TEST_F(Fault, AStreamDelayHoldsEveryTask) {
  ASSERT_OK(orFaultSetStreamDelay(20000));
  auto start = std::chrono::steady_clock::now();
  launch(nullptr, [] {});
  EXPECT_OK(orStreamSynchronize(nullptr));
  EXPECT_GE(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(19));  // a slow device
  EXPECT_OK(orFaultSetStreamDelay(0));
  EXPECT_EQ(orFaultSetStreamDelay(20'000'000), orErrorInvalidValue);
}

// Worker threads do not survive fork(): a child of a process whose runtime has
// started is refused, never left to hang, while harmless queries still work.
TEST_F(ForkDeathTest, AForkedChildIsRefusedNotLeftToHang) {
  void* started = nullptr;
  ASSERT_OK(orMalloc(&started, 64));
  ASSERT_OK(orStreamSynchronize(nullptr));
  // "fast": the statement runs in a child made by fork(), which is what is tested.
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_EXIT(
      {
        void* p = nullptr;
        int count = 0;
        bool refused = orMalloc(&p, 64) == orErrorInitializationError &&
                       std::strstr(orGetLastErrorDetail(), "spawn") != nullptr &&
                       orStreamSynchronize(nullptr) == orErrorInitializationError &&
                       orGetDeviceCount(&count) == orSuccess;
        _exit(refused ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
  EXPECT_OK(orFree(started));
}

}  // namespace

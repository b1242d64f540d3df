// driver_test.h: what the driver's GoogleTest files share: a fixture that resets the driver, and launch helpers.
#pragma once

#include "openreg.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <utility>

// The detail says why a call failed: print it with the failure.
#define EXPECT_OK(call) EXPECT_EQ((call), orSuccess) << orGetLastErrorDetail()
#define ASSERT_OK(call) ASSERT_EQ((call), orSuccess) << orGetLastErrorDetail()

// The tests share one process and so one driver: each ends by undoing what a
// failed test may have left behind (another current device, armed faults,
// a stream delay, recording, an idle callback), so that a failure does not spread.
class DriverTest : public testing::Test {
 protected:
  void TearDown() override {
    orSetDevice(0);
    for (orFaultKind kind : {orFaultAlloc, orFaultLaunch, orFaultCopy}) orFaultInject(kind, 0, 1);
    orFaultSetStreamDelay(0);
    orActivityEnable(0);
    orSetWorkerIdleCallback(nullptr, 0);
  }
};

// Launches a C++ callable as a kernel.
template <class F>
void launch(orStream_t stream, F f) {
  auto* boxed = new F(std::move(f));
  EXPECT_OK(orLaunchKernel(
      stream,
      [](void* p) {
        F* fn = static_cast<F*>(p);
        (*fn)();
        delete fn;
      },
      boxed));
}

// Inside a kernel: the address a kernel may touch for a device pointer.
inline float* kernel_view(void* dev) {
  void* k = nullptr;
  if (orGetKernelPointer(&k, dev) != orSuccess) orKernelFail("translation failed");
  return static_cast<float*>(k);
}

inline void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

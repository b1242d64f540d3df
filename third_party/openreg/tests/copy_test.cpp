// copy_test.cpp: memcpy in every direction, memset, pinned copies that overlap the host, the copy engine.
#include "driver_test.h"

#include <atomic>
#include <cstring>
#include <vector>

namespace {

struct Copy : DriverTest {};

TEST_F(Copy, EveryDirection) {
  std::vector<float> in(1000), out(1000, 0.f), back(1000, 0.f);
  for (int i = 0; i < 1000; ++i) in[i] = static_cast<float>(i) * 0.5f;
  void *a = nullptr, *b = nullptr;
  ASSERT_OK(orMalloc(&a, in.size() * 4));
  ASSERT_OK(orMalloc(&b, in.size() * 4));
  EXPECT_OK(orMemcpy(a, in.data(), in.size() * 4, orMemcpyHostToDevice));
  EXPECT_OK(orMemcpy(b, a, in.size() * 4, orMemcpyDeviceToDevice));
  EXPECT_OK(orMemcpy(out.data(), b, in.size() * 4, orMemcpyDeviceToHost));
  EXPECT_EQ(out, in);
  EXPECT_OK(orMemcpy(back.data(), out.data(), out.size() * 4, orMemcpyHostToHost));
  EXPECT_EQ(back, in);
  EXPECT_OK(orMemcpy(a, in.data(), 0, orMemcpyHostToDevice));  // nothing to copy
  EXPECT_OK(orFree(a));
  EXPECT_OK(orFree(b));
}

TEST_F(Copy, WrongDirectionOrOverrunIsRefused) {
  std::vector<float> host(1000, 1.f);
  void* a = nullptr;
  ASSERT_OK(orMalloc(&a, host.size() * 4));
  EXPECT_EQ(orMemcpy(a, host.data(), 16, orMemcpyDeviceToHost), orErrorInvalidMemcpyDirection);
  EXPECT_NE(std::strstr(orGetLastErrorDetail(), "DeviceToHost"), nullptr);
  EXPECT_EQ(orMemcpy(host.data(), host.data() + 4, 16, orMemcpyHostToDevice),
            orErrorInvalidMemcpyDirection);
  EXPECT_EQ(orMemcpy(a, host.data(), 8192, orMemcpyHostToDevice), orErrorInvalidValue);  // overruns
  EXPECT_OK(orFree(a));
}

TEST_F(Copy, MemsetSetsBytes) {
  std::vector<float> in(8, 3.f), out(8, 0.f);
  void* a = nullptr;
  ASSERT_OK(orMalloc(&a, in.size() * 4));
  ASSERT_OK(orMemcpy(a, in.data(), in.size() * 4, orMemcpyHostToDevice));
  EXPECT_OK(orMemset(a, 0, 16));
  EXPECT_OK(orMemcpy(out.data(), a, out.size() * 4, orMemcpyDeviceToHost));
  EXPECT_EQ(out[0], 0.f);
  EXPECT_EQ(out[3], 0.f);
  EXPECT_EQ(out[4], in[4]);
  EXPECT_EQ(orMemset(in.data(), 0, 4), orErrorInvalidValue);  // not device memory
  EXPECT_OK(orFree(a));
}

TEST_F(Copy, PinnedCopiesOverlapWithTheHost) {
  const size_t n = 1 << 20;
  void *host = nullptr, *dev = nullptr;
  ASSERT_OK(orMallocHost(&host, n * 4));
  ASSERT_OK(orMalloc(&dev, n * 4));
  orStream_t s;
  ASSERT_OK(orStreamCreate(&s));
  std::atomic<bool> released{false};
  launch(s, [&] {
    while (!released.load()) std::this_thread::yield();
  });
  EXPECT_OK(orMemcpyAsync(dev, host, n * 4, orMemcpyHostToDevice, s));
  EXPECT_EQ(orStreamQuery(s), orErrorNotReady);  // the async copy did not block
  released = true;
  EXPECT_OK(orStreamSynchronize(s));
  EXPECT_OK(orStreamDestroy(s));
  EXPECT_OK(orFree(dev));
  EXPECT_OK(orFreeHost(host));
}

TEST_F(Copy, BetweenDevices) {
  float in[4] = {1, 2, 3, 4}, out[4] = {};
  void *d0 = nullptr, *d1 = nullptr;
  ASSERT_OK(orSetDevice(0));
  ASSERT_OK(orMalloc(&d0, sizeof(in)));
  ASSERT_OK(orSetDevice(1));
  ASSERT_OK(orMalloc(&d1, sizeof(in)));
  EXPECT_OK(orMemcpy(d0, in, sizeof(in), orMemcpyHostToDevice));
  EXPECT_OK(orMemcpy(d1, d0, sizeof(in), orMemcpyDeviceToDevice));
  EXPECT_OK(orMemcpy(out, d1, sizeof(in), orMemcpyDeviceToHost));
  EXPECT_EQ(std::memcmp(in, out, sizeof(in)), 0);
  EXPECT_OK(orDeviceSynchronize());
  EXPECT_OK(orFree(d0));
  EXPECT_OK(orFree(d1));
}

// Large enough that the copy engine splits it across its channels: every
// chunk, including the odd-sized last one, lands where it belongs.
TEST_F(Copy, LargeCopiesSplitAcrossChannelsArriveWhole) {
  const size_t n = (9 << 20) / 4 + 123;
  std::vector<float> in(n), out(n, 0.f);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<float>(i % 100003);
  void *a = nullptr, *b = nullptr;
  ASSERT_OK(orMalloc(&a, n * 4));
  ASSERT_OK(orMalloc(&b, n * 4));
  EXPECT_OK(orMemcpy(a, in.data(), n * 4, orMemcpyHostToDevice));
  EXPECT_OK(orMemcpy(b, a, n * 4, orMemcpyDeviceToDevice));
  EXPECT_OK(orMemcpy(out.data(), b, n * 4, orMemcpyDeviceToHost));
  EXPECT_EQ(out, in);
  EXPECT_OK(orFree(a));
  EXPECT_OK(orFree(b));
}

}  // namespace

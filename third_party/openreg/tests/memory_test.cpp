// memory_test.cpp: devices, device and pinned memory, and the host's faults on device pointers.
#include "driver_test.h"

#include <csignal>
#include <cstring>

namespace {

struct Device : DriverTest {};
struct Memory : DriverTest {};
struct HostFaultDeathTest : DriverTest {};

TEST_F(Device, CountCurrentAndProperties) {
  int count = 0, device = -1;
  ASSERT_OK(orGetDeviceCount(&count));
  ASSERT_GE(count, 2);
  EXPECT_OK(orSetDevice(1));
  EXPECT_OK(orGetDevice(&device));
  EXPECT_EQ(device, 1);
  EXPECT_EQ(orSetDevice(count), orErrorInvalidDevice);
  EXPECT_NE(std::strstr(orGetLastErrorDetail(), "invalid device ordinal"), nullptr);
  int other_thread = -1;
  std::thread([&] { orGetDevice(&other_thread); }).join();
  EXPECT_EQ(other_thread, 0);  // the current device is per thread
  orDeviceProp prop;
  EXPECT_OK(orGetDeviceProperties(&prop, 0));
  EXPECT_GT(std::strlen(prop.name), 0u);
  EXPECT_GT(prop.totalGlobalMem, 0u);
}

TEST_F(Memory, AllocateAndFree) {
  void* dev = nullptr;
  ASSERT_OK(orMalloc(&dev, 4096));
  EXPECT_NE(dev, nullptr);
  EXPECT_OK(orFree(dev));
  EXPECT_EQ(orFree(dev), orErrorInvalidDevicePointer);  // already freed
}

TEST_F(Memory, PointerAttributes) {
  void *dev = nullptr, *host = nullptr;
  int plain = 0;
  ASSERT_OK(orSetDevice(1));
  ASSERT_OK(orMalloc(&dev, 1000));
  ASSERT_OK(orMallocHost(&host, 1000));
  orPointerAttributes attr;
  EXPECT_OK(orPointerGetAttributes(&attr, static_cast<char*>(dev) + 10));
  EXPECT_EQ(attr.type, orMemoryTypeDevice);
  EXPECT_EQ(attr.device, 1);
  EXPECT_EQ(attr.base, dev);
  EXPECT_OK(orPointerGetAttributes(&attr, host));
  EXPECT_EQ(attr.type, orMemoryTypeHost);
  EXPECT_EQ(attr.device, -1);
  EXPECT_OK(orPointerGetAttributes(&attr, &plain));
  EXPECT_EQ(attr.type, orMemoryTypeUnregistered);
  EXPECT_OK(orFree(dev));
  EXPECT_OK(orFreeHost(host));
}

TEST_F(Memory, DevicesHaveSeparateMemory) {
  void *d0 = nullptr, *d1 = nullptr;
  ASSERT_OK(orSetDevice(0));
  ASSERT_OK(orMalloc(&d0, 16));
  ASSERT_OK(orSetDevice(1));
  ASSERT_OK(orMalloc(&d1, 16));
  orPointerAttributes a0, a1;
  EXPECT_OK(orPointerGetAttributes(&a0, d0));
  EXPECT_OK(orPointerGetAttributes(&a1, d1));
  EXPECT_EQ(a0.device, 0);
  EXPECT_EQ(a1.device, 1);
  EXPECT_OK(orFree(d0));
  EXPECT_OK(orFree(d1));
}

TEST_F(Memory, OutOfMemoryIsAnErrorAndLeavesTheDeviceUsable) {
  size_t free_bytes = 0, total = 0;
  ASSERT_OK(orMemGetInfo(&free_bytes, &total));
  void* p = nullptr;
  EXPECT_EQ(orMalloc(&p, total + 1), orErrorMemoryAllocation);
  EXPECT_EQ(p, nullptr);
  EXPECT_NE(std::strstr(orGetLastErrorDetail(), "cannot allocate"), nullptr);
  ASSERT_OK(orMalloc(&p, 64));
  EXPECT_OK(orFree(p));
}

// A device pointer is an address the host cannot touch, as on real hardware: a
// read or a write through it kills the process. Only a kernel reaches the memory.
TEST_F(HostFaultDeathTest, HostCannotTouchDeviceMemory) {
  // Each death test runs in a new process that runs this test up to it: no
  // fork of a process whose driver threads are running.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  void* dev = nullptr;
  ASSERT_OK(orMalloc(&dev, 4096));
  EXPECT_EXIT(*static_cast<volatile int*>(dev) = 1, testing::KilledBySignal(SIGSEGV), "");
  EXPECT_EXIT((void)*static_cast<volatile int*>(dev), testing::KilledBySignal(SIGSEGV), "");
  void* k = nullptr;
  EXPECT_EQ(orGetKernelPointer(&k, dev), orErrorNotPermitted);  // outside a kernel
  EXPECT_OK(orFree(dev));
}

}  // namespace

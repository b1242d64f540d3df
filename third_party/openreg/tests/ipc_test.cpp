// ipc_test.cpp: interprocess sharing, exporter and importer in one process: ranges and control blocks.
#include "driver_test.h"

#include <unistd.h>

#include <atomic>
#include <cstring>

namespace {

struct Ipc : DriverTest {};

// The importer maps the exporter's memory through its own descriptor, as a
// process that received it over a Unix socket would (here a duplicate).
TEST_F(Ipc, AnImportedRangeIsTheSameMemory) {
  void* dev = nullptr;
  ASSERT_OK(orMalloc(&dev, 8192));
  void* shared = static_cast<char*>(dev) + 4096;
  float in[4] = {1, 2, 3, 4}, out[4] = {};
  ASSERT_OK(orMemcpy(shared, in, sizeof in, orMemcpyHostToDevice));
  orIpcMemHandle_t handle;
  ASSERT_OK(orIpcGetMemHandle(&handle, shared, sizeof in));
  orDeviceProp prop;
  ASSERT_OK(orGetDeviceProperties(&prop, 0));
  EXPECT_EQ(handle.device, prop.pciBusID);
  EXPECT_EQ(handle.size, sizeof in);
  int fd = dup(handle.fd);
  void* imported = nullptr;
  ASSERT_OK(orIpcOpenMemHandle(&imported, &handle, fd));
  EXPECT_NE(imported, shared);  // a mapping of its own
  EXPECT_OK(orMemcpy(out, imported, sizeof out, orMemcpyDeviceToHost));
  EXPECT_EQ(std::memcmp(in, out, sizeof in), 0);
  EXPECT_OK(orMemset(imported, 0, sizeof in));  // seen through the exporter's pointer
  EXPECT_OK(orMemcpy(out, shared, sizeof out, orMemcpyDeviceToHost));
  EXPECT_EQ(out[0], 0.f);
  EXPECT_EQ(out[3], 0.f);
  EXPECT_EQ(orMemcpy(out, imported, 2 * sizeof out, orMemcpyDeviceToHost), orErrorInvalidValue);
  orIpcMemHandle_t again;
  EXPECT_EQ(orIpcGetMemHandle(&again, imported, 4), orErrorNotPermitted);  // not re-exported
  EXPECT_OK(orIpcCloseMemHandle(imported));
  EXPECT_EQ(orIpcCloseMemHandle(imported), orErrorInvalidDevicePointer);
  close(fd);
  EXPECT_OK(orFree(dev));
}

TEST_F(Ipc, ARangeOnADeviceThisProcessCannotSeeIsRefused) {
  orIpcMemHandle_t handle{99, -1, 0, 4096};
  void* imported = nullptr;
  EXPECT_EQ(orIpcOpenMemHandle(&imported, &handle, -1), orErrorInvalidDevice);
  EXPECT_NE(std::strstr(orGetLastErrorDetail(), "not visible"), nullptr);
  EXPECT_EQ(imported, nullptr);
}

// The exporter's marker completes when the work queued before it on the
// device is done; an importer's stream waits for it before its later work.
TEST_F(Ipc, AControlMarkerOrdersTheImporterAfterTheExporter) {
  orIpcControl_t exporter = nullptr, importer = nullptr;
  int fd = -1;
  ASSERT_OK(orIpcControlCreate(&exporter, &fd));
  std::atomic<bool> released{false};
  std::atomic<int> step{0};
  launch(nullptr, [&] {
    while (!released.load()) std::this_thread::yield();
    step = 1;
  });
  uint64_t marker = 0;
  ASSERT_OK(orIpcControlRecord(exporter, 0, &marker));
  ASSERT_OK(orIpcControlOpen(&importer, fd));
  ASSERT_OK(orSetDevice(1));
  orStream_t s;
  ASSERT_OK(orStreamCreate(&s));
  EXPECT_OK(orIpcStreamWaitControl(s, importer, marker));
  int seen = -1;
  launch(s, [&] { seen = step.load(); });
  sleep_ms(20);
  EXPECT_EQ(orStreamQuery(s), orErrorNotReady);  // waiting for the marker
  released = true;
  EXPECT_OK(orStreamSynchronize(s));
  EXPECT_EQ(seen, 1);
  EXPECT_OK(orIpcStreamWaitControl(s, importer, marker));  // already complete: nothing queued
  EXPECT_OK(orStreamQuery(s));
  uint64_t not_ours = 0;
  EXPECT_EQ(orIpcControlRecord(importer, 0, &not_ours),
            orErrorInvalidValue);  // the exporter's only
  int64_t count = -1;
  EXPECT_OK(orIpcControlAddRef(importer, 1, &count));
  EXPECT_EQ(count, 1);
  EXPECT_OK(orIpcControlAddRef(exporter, -1, &count));  // one shared count
  EXPECT_EQ(count, 0);
  EXPECT_OK(orStreamDestroy(s));
  EXPECT_OK(orIpcControlDestroy(importer));
  EXPECT_OK(orIpcControlDestroy(exporter));
}

}  // namespace

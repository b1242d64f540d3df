// driver_tests.cpp: the emulated driver's own tests, run from tests/test_driver.py.
#include "openreg.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

int passed = 0;
int failed = 0;
std::string current;

#define EXPECT(cond)                                                               \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      std::printf("  %s: line %d: expected %s\n", current.c_str(), __LINE__, #cond); \
      throw 0;                                                                     \
    }                                                                              \
  } while (0)
#define EXPECT_OK(call) EXPECT((call) == orSuccess)

void run(const char* name, const std::function<void()>& body) {
  current = name;
  try {
    body();
    ++passed;
    std::printf("PASS %s\n", name);
  } catch (...) {
    ++failed;
    std::printf("FAIL %s\n", name);
  }
  orSetDevice(0);
}

// Launches a C++ callable as a kernel.
template <class F>
void launch(orStream_t stream, F f) {
  auto* boxed = new F(std::move(f));
  EXPECT_OK(orLaunchKernel(stream, [](void* p) {
    F* fn = static_cast<F*>(p);
    (*fn)();
    delete fn;
  }, boxed));
}

float* kernel_view(void* dev) {
  void* k = nullptr;
  if (orGetKernelPointer(&k, dev) != orSuccess) orKernelFail("translation failed");
  return static_cast<float*>(k);
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// A child process runs `body`; returns the signal that killed it, or 0.
int signal_of_child(const std::function<void()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

}  // namespace

int main() {
  run("devices", [] {
    int count = 0, device = -1;
    EXPECT_OK(orGetDeviceCount(&count));
    EXPECT(count >= 2);
    EXPECT_OK(orSetDevice(1));
    EXPECT_OK(orGetDevice(&device));
    EXPECT(device == 1);
    EXPECT(orSetDevice(count) == orErrorInvalidDevice);
    EXPECT(std::strstr(orGetLastErrorDetail(), "invalid device ordinal") != nullptr);
    std::thread([] {  // the current device is per thread
      int d = -1;
      orGetDevice(&d);
      if (d != 0) std::abort();
    }).join();
    orDeviceProp prop;
    EXPECT_OK(orGetDeviceProperties(&prop, 0));
    EXPECT(std::strlen(prop.name) > 0 && prop.totalGlobalMem > 0);
  });

  run("error strings", [] {
    EXPECT(std::strcmp(orGetErrorString(orSuccess), "no error") == 0);
    EXPECT(std::strcmp(orGetErrorString(orErrorMemoryAllocation), "out of memory") == 0);
    EXPECT(std::strcmp(orGetErrorString(static_cast<orError_t>(999)), "unrecognized error code") == 0);
  });

  run("host cannot touch device memory", [] {
    void* dev = nullptr;
    EXPECT_OK(orMalloc(&dev, 4096));
    EXPECT(signal_of_child([dev] { *static_cast<volatile int*>(dev) = 1; }) == SIGSEGV);
    EXPECT(signal_of_child([dev] { (void)*static_cast<volatile int*>(dev); }) == SIGSEGV);
    void* k = nullptr;
    EXPECT(orGetKernelPointer(&k, dev) == orErrorNotPermitted);
    EXPECT_OK(orFree(dev));
  });

  run("memcpy directions", [] {
    std::vector<float> in(1000), out(1000, 0.f);
    for (int i = 0; i < 1000; ++i) in[i] = static_cast<float>(i) * 0.5f;
    void *a = nullptr, *b = nullptr;
    EXPECT_OK(orMalloc(&a, in.size() * 4));
    EXPECT_OK(orMalloc(&b, in.size() * 4));
    EXPECT_OK(orMemcpy(a, in.data(), in.size() * 4, orMemcpyHostToDevice));
    EXPECT_OK(orMemcpy(b, a, in.size() * 4, orMemcpyDeviceToDevice));
    EXPECT_OK(orMemcpy(out.data(), b, in.size() * 4, orMemcpyDeviceToHost));
    EXPECT(out == in);
    EXPECT(orMemcpy(a, in.data(), 16, orMemcpyDeviceToHost) == orErrorInvalidMemcpyDirection);
    EXPECT(std::strstr(orGetLastErrorDetail(), "DeviceToHost") != nullptr);
    EXPECT(orMemcpy(out.data(), in.data(), 16, orMemcpyHostToDevice) == orErrorInvalidMemcpyDirection);
    EXPECT(orMemcpy(a, in.data(), 8192, orMemcpyHostToDevice) == orErrorInvalidValue);  // overruns
    EXPECT_OK(orMemset(a, 0, 16));
    EXPECT_OK(orMemcpy(out.data(), a, 16, orMemcpyDeviceToHost));
    EXPECT(out[0] == 0.f && out[3] == 0.f && out[4] == in[4]);
    EXPECT_OK(orFree(a));
    EXPECT_OK(orFree(b));
    EXPECT(orFree(a) == orErrorInvalidDevicePointer);
  });

  run("pointer attributes", [] {
    void *dev = nullptr, *host = nullptr;
    int plain = 0;
    EXPECT_OK(orSetDevice(1));
    EXPECT_OK(orMalloc(&dev, 1000));
    EXPECT_OK(orMallocHost(&host, 1000));
    orPointerAttributes attr;
    EXPECT_OK(orPointerGetAttributes(&attr, static_cast<char*>(dev) + 10));
    EXPECT(attr.type == orMemoryTypeDevice && attr.device == 1 && attr.base == dev);
    EXPECT_OK(orPointerGetAttributes(&attr, host));
    EXPECT(attr.type == orMemoryTypeHost && attr.device == -1);
    EXPECT_OK(orPointerGetAttributes(&attr, &plain));
    EXPECT(attr.type == orMemoryTypeUnregistered);
    EXPECT_OK(orFree(dev));
    EXPECT_OK(orFreeHost(host));
  });

  run("out of memory", [] {
    size_t free_bytes = 0, total = 0;
    EXPECT_OK(orMemGetInfo(&free_bytes, &total));
    void* p = nullptr;
    EXPECT(orMalloc(&p, total + 1) == orErrorMemoryAllocation);
    EXPECT(p == nullptr);
    EXPECT(std::strstr(orGetLastErrorDetail(), "cannot allocate") != nullptr);
    EXPECT_OK(orMalloc(&p, 64));  // still usable afterwards
    EXPECT_OK(orFree(p));
  });

  run("launch is asynchronous and ordered", [] {
    std::atomic<bool> released{false};
    std::vector<int> order;
    launch(nullptr, [&] {
      while (!released.load()) std::this_thread::yield();
      order.push_back(1);
    });
    launch(nullptr, [&] { order.push_back(2); });
    EXPECT(orStreamQuery(nullptr) == orErrorNotReady);  // returned before the work ran
    released = true;
    EXPECT_OK(orStreamSynchronize(nullptr));
    EXPECT((order == std::vector<int>{1, 2}));
    EXPECT_OK(orStreamQuery(nullptr));
  });

  run("kernels see device memory through the kernel view", [] {
    void* dev = nullptr;
    EXPECT_OK(orMalloc(&dev, 4 * 64));
    EXPECT_OK(orMemset(dev, 0, 4 * 64));
    launch(nullptr, [dev] {
      float* k = kernel_view(dev);
      for (int i = 0; i < 64; ++i) k[i] = static_cast<float>(i);
    });
    float out[64];
    EXPECT_OK(orMemcpy(out, dev, sizeof(out), orMemcpyDeviceToHost));
    EXPECT(out[0] == 0.f && out[63] == 63.f);
    EXPECT_OK(orFree(dev));
  });

  run("kernel failure is reported at synchronize, once", [] {
    launch(nullptr, [] { orKernelFail("index 7 is out of bounds"); });
    EXPECT(orStreamSynchronize(nullptr) == orErrorLaunchFailure);
    EXPECT(std::strstr(orGetLastErrorDetail(), "index 7") != nullptr);
    EXPECT_OK(orStreamSynchronize(nullptr));
  });

  run("handles from outside are checked, never dereferenced", [] {
    auto* garbage_event = reinterpret_cast<orEvent_t>(uintptr_t{99});
    auto* garbage_stream = reinterpret_cast<orStream_t>(uintptr_t{99});
    float ms = 0;
    int device = -1;
    EXPECT(orEventQuery(garbage_event) == orErrorInvalidResourceHandle);
    EXPECT(orEventElapsedTime(&ms, garbage_event, garbage_event) == orErrorInvalidResourceHandle);
    EXPECT(orEventDestroy(garbage_event) == orErrorInvalidResourceHandle);
    EXPECT(orStreamSynchronize(garbage_stream) == orErrorInvalidResourceHandle);
    EXPECT(orStreamGetDevice(garbage_stream, &device) == orErrorInvalidResourceHandle);
    orEvent_t e;
    EXPECT_OK(orEventCreate(&e));
    EXPECT_OK(orEventDestroy(e));
    EXPECT(orEventQuery(e) == orErrorInvalidResourceHandle);  // destroyed: no longer live
  });

  run("injected faults fail the nth event, then stop", [] {
    void* dev = nullptr;
    EXPECT_OK(orFaultInject(orFaultAlloc, 2, 1));
    EXPECT_OK(orMalloc(&dev, 256));                           // the 1st: fine
    void* second = nullptr;
    EXPECT(orMalloc(&second, 256) == orErrorMemoryAllocation);  // the 2nd: refused
    EXPECT(std::strstr(orGetLastErrorDetail(), "injected fault") != nullptr);
    EXPECT_OK(orMalloc(&second, 256));                        // the 3rd: fine again
    EXPECT_OK(orFaultInject(orFaultLaunch, 1, 1));
    std::atomic<bool> ran{false};
    launch(nullptr, [&] { ran = true; });
    EXPECT(orStreamSynchronize(nullptr) == orErrorLaunchFailure);
    EXPECT(!ran.load());                                      // the kernel never ran
    float host[4] = {1, 2, 3, 4};
    EXPECT_OK(orFaultInject(orFaultCopy, 1, 1));
    EXPECT(orMemcpy(dev, host, sizeof host, orMemcpyHostToDevice) == orErrorLaunchFailure);
    EXPECT_OK(orMemcpy(dev, host, sizeof host, orMemcpyHostToDevice));
    EXPECT(orFaultInject(static_cast<orFaultKind>(7), 1, 1) == orErrorInvalidValue);
    EXPECT_OK(orFree(dev));
    EXPECT_OK(orFree(second));
  });

  run("events time work and order streams", [] {
    orStream_t a, b;
    orEvent_t start, stop, done;
    EXPECT_OK(orStreamCreate(&a));
    EXPECT_OK(orStreamCreateWithPriority(&b, -1));
    EXPECT(orStreamCreateWithPriority(&b, 5) == orErrorInvalidValue);
    EXPECT_OK(orEventCreate(&start));
    EXPECT_OK(orEventCreate(&stop));
    EXPECT_OK(orEventCreateWithFlags(&done, orEventDisableTiming));
    EXPECT_OK(orEventQuery(done));  // never recorded: complete
    std::atomic<int> step{0};
    EXPECT_OK(orEventRecord(start, a));
    launch(a, [&] { sleep_ms(40); step = 1; });
    EXPECT_OK(orEventRecord(stop, a));
    EXPECT_OK(orEventRecord(done, a));
    EXPECT(orEventQuery(stop) == orErrorNotReady);
    EXPECT_OK(orStreamWaitEvent(b, done));
    int seen = -1;
    launch(b, [&] { seen = step.load(); });
    EXPECT_OK(orStreamSynchronize(b));
    EXPECT(seen == 1);  // b waited for a
    EXPECT_OK(orEventSynchronize(stop));
    float ms = 0;
    EXPECT_OK(orEventElapsedTime(&ms, start, stop));
    EXPECT(ms >= 39.f && ms < 80.f);
    EXPECT(orEventElapsedTime(&ms, start, done) == orErrorInvalidResourceHandle);
    EXPECT_OK(orEventDestroy(start));
    EXPECT_OK(orEventDestroy(stop));
    EXPECT_OK(orEventDestroy(done));
    EXPECT_OK(orStreamDestroy(a));
    EXPECT_OK(orStreamDestroy(b));
    EXPECT(orStreamDestroy(nullptr) == orErrorInvalidResourceHandle);
  });

  run("pinned copies overlap with the host", [] {
    const size_t n = 1 << 20;
    void *host = nullptr, *dev = nullptr;
    EXPECT_OK(orMallocHost(&host, n * 4));
    EXPECT_OK(orMalloc(&dev, n * 4));
    orStream_t s;
    EXPECT_OK(orStreamCreate(&s));
    std::atomic<bool> released{false};
    launch(s, [&] { while (!released.load()) std::this_thread::yield(); });
    EXPECT_OK(orMemcpyAsync(dev, host, n * 4, orMemcpyHostToDevice, s));
    EXPECT(orStreamQuery(s) == orErrorNotReady);  // the async copy did not block
    released = true;
    EXPECT_OK(orStreamSynchronize(s));
    EXPECT_OK(orStreamDestroy(s));
    EXPECT_OK(orFree(dev));
    EXPECT_OK(orFreeHost(host));
  });

  run("devices have separate memory and copy to each other", [] {
    float in[4] = {1, 2, 3, 4}, out[4] = {};
    void *d0 = nullptr, *d1 = nullptr;
    EXPECT_OK(orSetDevice(0));
    EXPECT_OK(orMalloc(&d0, sizeof(in)));
    EXPECT_OK(orSetDevice(1));
    EXPECT_OK(orMalloc(&d1, sizeof(in)));
    orPointerAttributes a0, a1;
    EXPECT_OK(orPointerGetAttributes(&a0, d0));
    EXPECT_OK(orPointerGetAttributes(&a1, d1));
    EXPECT(a0.device == 0 && a1.device == 1);
    EXPECT_OK(orMemcpy(d0, in, sizeof(in), orMemcpyHostToDevice));
    EXPECT_OK(orMemcpy(d1, d0, sizeof(in), orMemcpyDeviceToDevice));
    EXPECT_OK(orMemcpy(out, d1, sizeof(in), orMemcpyDeviceToHost));
    EXPECT(std::memcmp(in, out, sizeof(in)) == 0);
    EXPECT_OK(orDeviceSynchronize());
    EXPECT_OK(orFree(d0));
    EXPECT_OK(orFree(d1));
  });

  run("graphs capture work and replay it", [] {
    static std::atomic<int> runs{0}, releases{0};
    orStream_t s;
    EXPECT_OK(orStreamCreate(&s));
    EXPECT(orStreamBeginCapture(nullptr) == orErrorNotPermitted);  // not the default stream
    EXPECT_OK(orStreamBeginCapture(s));
    int capturing = 0;
    EXPECT_OK(orStreamIsCapturing(s, &capturing));
    EXPECT(capturing == 1);
    EXPECT_OK(orLaunchKernelEx(s, [](void*) { runs++; }, nullptr, [](void*) { releases++; }));
    void* dev = nullptr;
    EXPECT_OK(orMalloc(&dev, 64));
    EXPECT_OK(orMemsetAsync(dev, 7, 64, s));
    EXPECT(orStreamSynchronize(s) == orErrorNotPermitted);
    std::vector<char> host(64);
    EXPECT(orMemcpyAsync(host.data(), dev, 64, orMemcpyDeviceToHost, s) == orErrorNotPermitted);
    orGraph_t graph = nullptr;
    EXPECT_OK(orStreamEndCapture(s, &graph));
    size_t nodes = 0;
    EXPECT_OK(orGraphGetNodeCount(graph, &nodes));
    EXPECT(nodes == 2);
    EXPECT_OK(orStreamSynchronize(s));
    EXPECT(runs == 0);  // captured, not run
    for (int i = 0; i < 3; ++i) EXPECT_OK(orGraphLaunch(graph, s));
    EXPECT_OK(orStreamSynchronize(s));
    EXPECT(runs == 3 && releases == 0);
    EXPECT_OK(orMemcpy(host.data(), dev, 64, orMemcpyDeviceToHost));
    EXPECT(host[0] == 7 && host[63] == 7);
    EXPECT_OK(orGraphDestroy(graph));
    EXPECT(releases == 1);
    EXPECT_OK(orFree(dev));
    EXPECT_OK(orStreamDestroy(s));
  });

  run("a launch copies its arguments", [] {
    struct Args {
      int64_t values[3];
      int64_t calls;  // the kernel counts in its own copy
    };
    static_assert(sizeof(Args) == OR_LAUNCH_ARGS_MAX, "the largest copy the driver takes");
    static std::vector<int64_t> seen;  // written only by the stream's worker
    seen.clear();
    auto record = [](void* p) {
      EXPECT(reinterpret_cast<uintptr_t>(p) % 8 == 0);
      auto* a = static_cast<Args*>(p);
      a->calls++;
      seen.push_back(a->values[0] + a->values[1] + a->values[2] + 1000 * a->calls);
    };
    orStream_t s;
    EXPECT_OK(orStreamCreate(&s));
    static std::atomic<bool> released{false};
    released = false;
    launch(s, [] { while (!released.load()) std::this_thread::yield(); });  // holds the worker
    Args args{{1, 2, 3}, 0};
    EXPECT_OK(orLaunchKernelWithArgs(s, record, &args, sizeof(args)));
    args.values[0] = 10;  // the caller's buffer is its own again at once
    EXPECT_OK(orLaunchKernelWithArgs(s, record, &args, sizeof(args)));
    std::memset(&args, 0xff, sizeof(args));
    EXPECT_OK(orLaunchKernelWithArgs(s, [](void*) { seen.push_back(-1); }, nullptr, 0));
    released = true;
    EXPECT_OK(orStreamSynchronize(s));
    EXPECT((seen == std::vector<int64_t>{1006, 1015, -1}));

    // Captured: every replay starts from the arguments as launched.
    Args captured{{4, 5, 6}, 0};
    EXPECT_OK(orStreamBeginCapture(s));
    EXPECT_OK(orLaunchKernelWithArgs(s, record, &captured, sizeof(captured)));
    orGraph_t graph = nullptr;
    EXPECT_OK(orStreamEndCapture(s, &graph));
    seen.clear();
    for (int i = 0; i < 3; ++i) EXPECT_OK(orGraphLaunch(graph, s));
    EXPECT_OK(orStreamSynchronize(s));
    EXPECT((seen == std::vector<int64_t>{1015, 1015, 1015}));
    EXPECT_OK(orGraphDestroy(graph));

    // Recorded for a profiler: the record wraps the launch, the kernel still
    // gets its arguments.
    seen.clear();
    EXPECT_OK(orActivityEnable(1));
    EXPECT_OK(orLaunchKernelWithArgs(s, record, &captured, sizeof(captured)));
    EXPECT_OK(orStreamSynchronize(s));
    EXPECT_OK(orActivityEnable(0));
    EXPECT((seen == std::vector<int64_t>{1015}));

    // What the driver refuses.
    unsigned char big[OR_LAUNCH_ARGS_MAX + 1] = {};
    EXPECT(orLaunchKernelWithArgs(s, record, big, sizeof(big)) == orErrorInvalidValue);
    EXPECT(std::strstr(orGetLastErrorDetail(), "OR_LAUNCH_ARGS_MAX") != nullptr);
    EXPECT(orLaunchKernelWithArgs(s, record, nullptr, 8) == orErrorInvalidValue);
    EXPECT(orLaunchKernelWithArgs(s, nullptr, &captured, sizeof(captured)) == orErrorInvalidValue);
    EXPECT_OK(orStreamSynchronize(s));
    EXPECT(seen.size() == 1);
    EXPECT_OK(orStreamDestroy(s));
  });

  run("launches from several threads run in each thread's order, past the ring's size", [] {
    orStream_t s;
    EXPECT_OK(orStreamCreate(&s));
    static std::atomic<bool> released{false};
    released = false;
    // The worker is held at the first task: the launches below fill the
    // stream, wait for room, and run once it is released.
    launch(s, [] { while (!released.load()) std::this_thread::yield(); });
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
    EXPECT(ran.size() == static_cast<size_t>(kThreads * kEach));
    std::vector<int> next(kThreads, 0);
    for (int v : ran) {
      EXPECT(v % kEach == next[v / kEach]);  // each thread's launches in the order it made them
      next[v / kEach]++;
    }
    EXPECT_OK(orStreamDestroy(s));
  });

  run("a task that launches on its own stream", [] {
    orStream_t s;
    EXPECT_OK(orStreamCreate(&s));
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
    EXPECT(few.runs == 10);
    // More than the stream holds: the worker cannot wait for itself, so the
    // launches past the last free slot fail, reported at the next synchronize.
    Self many{s, 5000};
    EXPECT_OK(orLaunchHostFunc(s, launch_on_own_stream, &many));
    EXPECT(orStreamSynchronize(s) == orErrorLaunchFailure);
    EXPECT(std::strstr(orGetLastErrorDetail(), "its own stream") != nullptr);
    // The error was reported once; this synchronize waits for the launches
    // that fitted.
    EXPECT_OK(orStreamSynchronize(s));
    EXPECT(many.runs > 1000 && many.runs < 5000);
    EXPECT_OK(orStreamDestroy(s));
  });

  run("a forked child is refused, not left to hang", [] {
    // The runtime has started (the tests above made streams and memory).
    pid_t pid = fork();
    if (pid == 0) {
      void* p = nullptr;
      bool refused = orMalloc(&p, 64) == orErrorInitializationError &&
                     std::strstr(orGetLastErrorDetail(), "spawn") != nullptr &&
                     orStreamSynchronize(nullptr) == orErrorInitializationError;
      int count = 0;
      refused = refused && orGetDeviceCount(&count) == orSuccess;  // harmless queries still work
      _exit(refused ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  });

  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

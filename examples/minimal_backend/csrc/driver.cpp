// LITERALINCLUDE START: MINIMAL_BACKEND_DRIVER_MEMORY
// driver.cpp: minidrv's memory. Each allocation is two mappings of whole pages: the
// address handed out is mapped PROT_NONE, so a host read or write through it faults as
// it would on a device, and a second, read-write mapping is where "the device" keeps
// the bytes. A block owns its pages alone, so freeing it unmaps exactly its own
// mappings. Never free part of a page that other blocks share: madvise(MADV_REMOVE),
// munmap and fallocate(PUNCH_HOLE) act on whole pages, so a sub-allocator that frees a
// small block with them wipes its neighbours on the same page.
#include "driver.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>

namespace {
struct Block {
  char* device;  // the read-write mapping the device uses
  size_t bytes;  // both mappings' length: a whole number of pages
};

std::mutex blocks_mutex;
std::map<const char*, Block> blocks;  // by the address handed out (the PROT_NONE mapping)

// The device bytes for [ptr, ptr + nbytes), if that range lies inside one block.
char* device_range(const void* ptr, size_t nbytes) {
  const char* address = static_cast<const char*>(ptr);
  std::lock_guard<std::mutex> lock(blocks_mutex);
  auto after = blocks.upper_bound(address);
  if (after == blocks.begin()) return nullptr;
  const auto& [start, block] = *std::prev(after);
  size_t offset = address - start;
  if (offset >= block.bytes || nbytes > block.bytes - offset) return nullptr;
  return block.device + offset;
}
}  // namespace

extern "C" {
const char* mdGetErrorString(mdError error) {
  switch (error) {
    case mdSuccess: return "no error";
    case mdErrorOutOfMemory: return "out of device memory";
    case mdErrorInvalidValue: return "invalid argument";
  }
  return "unknown error";
}

int mdDeviceCount() { return 1; }

mdError mdMalloc(void** ptr, size_t nbytes) {
  if (ptr == nullptr) return mdErrorInvalidValue;
  *ptr = nullptr;
  if (nbytes == 0) return mdSuccess;
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t bytes = (nbytes + page - 1) / page * page;
  void* host = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (host == MAP_FAILED) return mdErrorOutOfMemory;
  void* device = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (device == MAP_FAILED) {
    munmap(host, bytes);
    return mdErrorOutOfMemory;
  }
  std::lock_guard<std::mutex> lock(blocks_mutex);
  blocks.emplace(static_cast<const char*>(host), Block{static_cast<char*>(device), bytes});
  *ptr = host;
  return mdSuccess;
}

mdError mdFree(void* ptr) {
  if (ptr == nullptr) return mdSuccess;
  Block block;
  {
    std::lock_guard<std::mutex> lock(blocks_mutex);
    auto found = blocks.find(static_cast<const char*>(ptr));
    if (found == blocks.end()) return mdErrorInvalidValue;  // not the start of a block
    block = found->second;
    blocks.erase(found);
  }
  munmap(ptr, block.bytes);  // this block's pages only: no neighbour shares them
  munmap(block.device, block.bytes);
  return mdSuccess;
}

void* mdDeviceView(const void* ptr) { return device_range(ptr, 1); }

mdError mdMemcpy(void* dst, const void* src, size_t nbytes, mdMemcpyKind kind) {
  if (nbytes == 0) return mdSuccess;
  void* to = kind == mdDeviceToHost ? dst : device_range(dst, nbytes);
  const void* from = kind == mdHostToDevice ? src : device_range(src, nbytes);
  if (to == nullptr || from == nullptr) return mdErrorInvalidValue;
  std::memmove(to, from, nbytes);
  return mdSuccess;
}

mdError mdMemset(void* ptr, int value, size_t nbytes) {
  if (nbytes == 0) return mdSuccess;
  char* bytes = device_range(ptr, nbytes);
  if (bytes == nullptr) return mdErrorInvalidValue;
  std::memset(bytes, value, nbytes);
  return mdSuccess;
}
}
// LITERALINCLUDE END: MINIMAL_BACKEND_DRIVER_MEMORY

// LITERALINCLUDE START: MINIMAL_BACKEND_DRIVER_STREAMS
// minidrv's streams and events. Every launch runs before mdLaunch returns, so each
// stream is idle whenever the host asks, waiting on an event has nothing to wait
// for, and an event's time is taken when it is recorded: by then the work before
// it on its stream has finished. An asynchronous driver keeps a queue per stream
// and must copy a kernel's arguments, which this one may read in place.
#include "driver.h"

#include <chrono>

struct mdStream_ {};  // a stream has no state when its work is done at launch

struct mdEvent_ {
  bool recorded = false;
  std::chrono::steady_clock::time_point when;
};

extern "C" {
mdError mdDeviceSynchronize() { return mdSuccess; }

mdError mdStreamCreate(mdStream* stream) {
  if (stream == nullptr) return mdErrorInvalidValue;
  *stream = new mdStream_();  // lives as long as the process, as CUDA's pooled streams do
  return mdSuccess;
}

mdError mdStreamQuery(mdStream) { return mdSuccess; }
mdError mdStreamSynchronize(mdStream) { return mdSuccess; }

mdError mdStreamWaitEvent(mdStream, mdEvent event) {
  return event == nullptr ? mdErrorInvalidValue : mdSuccess;
}

mdError mdLaunch(mdStream, mdKernel kernel, void* args) {
  if (kernel == nullptr) return mdErrorInvalidValue;
  kernel(args);
  return mdSuccess;
}

mdError mdEventCreate(mdEvent* event) {
  if (event == nullptr) return mdErrorInvalidValue;
  *event = new mdEvent_();
  return mdSuccess;
}

mdError mdEventDestroy(mdEvent event) {
  delete event;
  return mdSuccess;
}

mdError mdEventRecord(mdEvent event, mdStream) {
  if (event == nullptr) return mdErrorInvalidValue;
  event->recorded = true;
  event->when = std::chrono::steady_clock::now();
  return mdSuccess;
}

mdError mdEventQuery(mdEvent event) { return event == nullptr ? mdErrorInvalidValue : mdSuccess; }
mdError mdEventSynchronize(mdEvent event) { return mdEventQuery(event); }

mdError mdEventElapsedTime(float* ms, mdEvent start, mdEvent end) {
  if (ms == nullptr || start == nullptr || end == nullptr || !start->recorded || !end->recorded) {
    return mdErrorInvalidValue;
  }
  *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return mdSuccess;
}
}
// LITERALINCLUDE END: MINIMAL_BACKEND_DRIVER_STREAMS

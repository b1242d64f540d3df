// OpenRegHostAllocator.cpp: pinned memory from orMallocHost, cached by ATen's host allocator.
#include "OpenRegHostAllocator.h"

#include <c10/core/DeviceGuard.h>

#include "OpenRegException.h"
#include "OpenRegStream.h"

namespace c10::openreg {

namespace {
// An owned driver event: what the host allocator waits for before reusing a
// block that an asynchronous copy may still be reading.
struct HostEvent {
  orEvent_t event = nullptr;

  HostEvent() { OPENREG_CHECK(orEventCreateWithFlags(&event, orEventDisableTiming)); }
  HostEvent(HostEvent&& other) noexcept : event(std::exchange(other.event, nullptr)) {}
  HostEvent& operator=(HostEvent&& other) noexcept {
    std::swap(event, other.event);
    return *this;
  }
  HostEvent(const HostEvent&) = delete;
  HostEvent& operator=(const HostEvent&) = delete;
  ~HostEvent() {
    if (event != nullptr) orEventDestroy(event);
  }
};

// LITERALINCLUDE START: HOST_ALLOCATOR_IMPL
// ATen's CachingHostAllocatorImpl does the caching, the stream bookkeeping and
// the statistics; a backend supplies the six runtime calls it cannot know.
struct OpenRegHostAllocatorImpl final
    : public at::CachingHostAllocatorImpl<c10::Stream, HostEvent> {
 private:
  void allocate_host_memory(size_t size, void** ptr) override {
    OPENREG_CHECK(orMallocHost(ptr, size));
  }

  void free_block(at::HostBlock<c10::Stream>* block) override {
    OPENREG_CHECK(orFreeHost(block->ptr_));
  }

  void record_stream(std::optional<std::vector<HostEvent>>& events, c10::Stream stream) override {
    c10::DeviceGuard guard(stream.device());
    HostEvent event;
    OPENREG_CHECK(orEventRecord(event.event, OpenRegStream(stream).stream()));
    events->push_back(std::move(event));
  }

  bool query_event(HostEvent& event) override {
    orError_t err = orEventQuery(event.event);
    if (err == orErrorNotReady) return false;
    OPENREG_CHECK(err);
    return true;
  }

  c10::Stream get_current_stream() const override { return getCurrentOpenRegStream().unwrap(); }

  bool stream_is_capturing(c10::Stream) const override { return false; }
};
// LITERALINCLUDE END: HOST_ALLOCATOR_IMPL

void delete_pinned(void* ctx);

// LITERALINCLUDE START: HOST_ALLOCATOR_REGISTER
DECLARE_HOST_ALLOCATOR(OpenRegHostAllocator, OpenRegHostAllocatorImpl, delete_pinned,
                       pinned_allocator)
REGISTER_HOST_ALLOCATOR(at::kPrivateUse1, &pinned_allocator)
// LITERALINCLUDE END: HOST_ALLOCATOR_REGISTER
}  // namespace

// The hooks' getPinnedMemoryAllocator and the copies reach the allocator here.
at::HostAllocator* host_allocator() { return &pinned_allocator; }

}  // namespace c10::openreg

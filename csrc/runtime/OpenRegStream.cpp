// OpenRegStream.cpp: lazily created driver streams behind c10 stream ids.
#include "OpenRegStream.h"

#include <algorithm>
#include <c10/core/DeviceGuard.h>

#include <array>
#include <atomic>
#include <mutex>
#include <vector>

#include "OpenRegException.h"
#include "OpenRegFunctions.h"

namespace c10::openreg {

namespace {
constexpr int kPriorities = 2;  // 0: normal, 1: high (-1 in CUDA's convention)
constexpr DeviceIndex kMaxDevices = 16;

struct DevicePool {
  std::mutex mu;
  std::array<std::array<orStream_t, OpenRegStream::kStreamsPerPool>, kPriorities> streams{};
  std::array<std::atomic<uint32_t>, kPriorities> next{};
};

DevicePool& pool(DeviceIndex device) {
  static auto* pools =
      new std::array<DevicePool, kMaxDevices>();  // leaked: lives as long as workers
  return (*pools)[device];
}

// Streams created outside PyTorch, in the order they were first wrapped.
std::mutex external_mu;
std::vector<orStream_t>& external_streams() {
  static auto* streams = new std::vector<orStream_t>();
  return *streams;
}

// The thread's current stream id per device; 0 (the default stream) unless set.
thread_local std::array<StreamId, kMaxDevices> current_ids{};

DeviceIndex resolve(DeviceIndex device) {
  if (device < 0) return current_device();
  check_device_index(device);
  return device;
}

// LITERALINCLUDE START: STREAM_POOL_LAZY_CREATE
orStream_t pooled_stream(DeviceIndex device, StreamId id) {
  int slot = static_cast<int>(id - 1);
  int level = slot / OpenRegStream::kStreamsPerPool;
  int index = slot % OpenRegStream::kStreamsPerPool;
  DevicePool& p = pool(device);
  std::lock_guard<std::mutex> lock(p.mu);
  orStream_t& s = p.streams[level][index];
  if (s == nullptr) {
    c10::DeviceGuard guard(Device(DeviceType::PrivateUse1, device));
    OPENREG_CHECK(orStreamCreateWithPriority(&s, level == 0 ? 0 : -1));
  }
  return s;
}
// LITERALINCLUDE END: STREAM_POOL_LAZY_CREATE
}  // namespace

// LITERALINCLUDE START: STREAM_CLASS_METHODS
OpenRegStream::OpenRegStream(Stream stream) : stream_(stream) {
  TORCH_CHECK(stream.device_type() == DeviceType::PrivateUse1, "expected an openreg stream, got ",
              stream);
  bool known = stream.id() >= 0 && stream.id() < kFirstExternalId;
  if (!known) {
    std::lock_guard<std::mutex> lock(external_mu);
    known = static_cast<size_t>(stream.id() - kFirstExternalId) < external_streams().size();
  }
  TORCH_CHECK(known, "invalid openreg stream id ", stream.id());
}

orStream_t OpenRegStream::stream() const {
  // The default stream is the driver's NULL stream of the device, so callers
  // use it with that device current (a DeviceGuard), as with CUDA's.
  if (id() == 0) return nullptr;
  if (id() >= kFirstExternalId) {
    std::lock_guard<std::mutex> lock(external_mu);
    return external_streams()[id() - kFirstExternalId];
  }
  return pooled_stream(device_index(), id());
}

int OpenRegStream::priority() const {
  if (id() >= kFirstExternalId) {
    int priority = 0;
    OPENREG_CHECK(orStreamGetPriority(stream(), &priority));
    return priority;
  }
  return id() > kStreamsPerPool ? -1 : 0;
}

bool OpenRegStream::query() const {
  c10::DeviceGuard guard(device());
  orError_t err = orStreamQuery(stream());
  if (err == orErrorNotReady) return false;
  OPENREG_CHECK(err);
  return true;
}
// LITERALINCLUDE END: STREAM_CLASS_METHODS

bool OpenRegStream::is_capturing() const {
  if (id() == 0) return false;  // the driver refuses to capture a default stream
  int capturing = 0;
  OPENREG_CHECK(orStreamIsCapturing(stream(), &capturing));
  return capturing != 0;
}

void OpenRegStream::synchronize() const {
  c10::DeviceGuard guard(device());
  OPENREG_CHECK(orStreamSynchronize(stream()));
}

// LITERALINCLUDE START: STREAM_GET_CURRENT_AND_DEFAULT
OpenRegStream getCurrentOpenRegStream(DeviceIndex device) {
  device = resolve(device);
  return OpenRegStream(
      Stream(Stream::UNSAFE, Device(DeviceType::PrivateUse1, device), current_ids[device]));
}

OpenRegStream getDefaultOpenRegStream(DeviceIndex device) {
  device = resolve(device);
  return OpenRegStream(Stream(Stream::UNSAFE, Device(DeviceType::PrivateUse1, device), 0));
}
// LITERALINCLUDE END: STREAM_GET_CURRENT_AND_DEFAULT

// LITERALINCLUDE START: STREAM_POOL_AND_CURRENT
OpenRegStream getStreamFromPool(int priority, DeviceIndex device) {
  device = resolve(device);
  int level = priority < 0 ? 1 : 0;
  uint32_t index = pool(device).next[level].fetch_add(1) % OpenRegStream::kStreamsPerPool;
  StreamId id = 1 + level * OpenRegStream::kStreamsPerPool + index;
  return OpenRegStream(Stream(Stream::UNSAFE, Device(DeviceType::PrivateUse1, device), id));
}

void setCurrentOpenRegStream(OpenRegStream stream) {
  current_ids[stream.device_index()] = stream.id();
}
// LITERALINCLUDE END: STREAM_POOL_AND_CURRENT

}  // namespace c10::openreg

namespace c10::openreg {

// LITERALINCLUDE START: STREAM_FROM_EXTERNAL
OpenRegStream getStreamFromExternal(orStream_t external, DeviceIndex device) {
  TORCH_CHECK(external != nullptr,
              "an external stream cannot be NULL (that is the default stream)");
  int stream_device = -1;
  OPENREG_CHECK(orStreamGetDevice(external, &stream_device));
  device = resolve(device);
  TORCH_CHECK(stream_device == device, "the external stream belongs to openreg:", stream_device,
              ", not openreg:", int(device));
  size_t index;
  {
    std::lock_guard<std::mutex> lock(external_mu);
    auto& streams = external_streams();
    auto it = std::find(streams.begin(), streams.end(), external);
    index = it - streams.begin();
    if (it == streams.end()) streams.push_back(external);
  }
  return OpenRegStream(Stream(Stream::UNSAFE, Device(DeviceType::PrivateUse1, device),
                              OpenRegStream::kFirstExternalId + static_cast<StreamId>(index)));
}
// LITERALINCLUDE END: STREAM_FROM_EXTERNAL

std::optional<StreamId> find_stream_id(DeviceIndex device, orStream_t stream) {
  {
    DevicePool& p = pool(device);
    std::lock_guard<std::mutex> lock(p.mu);
    for (int level = 0; level < kPriorities; ++level) {
      for (int index = 0; index < OpenRegStream::kStreamsPerPool; ++index) {
        if (p.streams[level][index] == stream)
          return 1 + level * OpenRegStream::kStreamsPerPool + index;
      }
    }
  }
  std::lock_guard<std::mutex> lock(external_mu);
  auto& streams = external_streams();
  auto it = std::find(streams.begin(), streams.end(), stream);
  if (it == streams.end()) return std::nullopt;
  return OpenRegStream::kFirstExternalId + static_cast<StreamId>(it - streams.begin());
}

double event_elapsed_time(void* start, void* end) {
  TORCH_CHECK(start != nullptr && end != nullptr,
              "both events must be recorded before asking for the elapsed time");
  float ms = 0;
  OPENREG_CHECK(
      orEventElapsedTime(&ms, static_cast<orEvent_t>(start), static_cast<orEvent_t>(end)));
  return ms;
}

}  // namespace c10::openreg

// OpenRegStream.h: c10::Stream for openreg, the per-device stream pools and the current stream.
#pragma once

#include <c10/core/Stream.h>
#include <openreg.h>

#include <optional>

namespace c10::openreg {

// LITERALINCLUDE START: STREAM_HEADER_DECLARATIONS
// A c10::Stream whose id names a driver stream: 0 is the device's default
// stream, 1..2*kStreamsPerPool index the pool (normal, then high priority),
// and ids from kFirstExternalId name streams created outside PyTorch.
class OpenRegStream {
 public:
  static constexpr int kStreamsPerPool = 8;
  static constexpr StreamId kFirstExternalId = 1 + 2 * kStreamsPerPool;

  explicit OpenRegStream(Stream stream);

  orStream_t stream() const;
  Stream unwrap() const { return stream_; }
  operator Stream() const { return stream_; }
  DeviceIndex device_index() const { return stream_.device_index(); }
  Device device() const { return stream_.device(); }
  StreamId id() const { return stream_.id(); }
  int priority() const;
  bool query() const;
  bool is_capturing() const;  // work queued now is recorded into a graph, not run
  void synchronize() const;

  bool operator==(const OpenRegStream& other) const { return stream_ == other.stream_; }

 private:
  Stream stream_;
};

OpenRegStream getCurrentOpenRegStream(DeviceIndex device = -1);
OpenRegStream getDefaultOpenRegStream(DeviceIndex device = -1);
// priority follows CUDA: 0 is normal, -1 is high.
OpenRegStream getStreamFromPool(int priority = 0, DeviceIndex device = -1);
void setCurrentOpenRegStream(OpenRegStream stream);
// Wraps a driver stream created by other code (a library using the same driver).
OpenRegStream getStreamFromExternal(orStream_t external, DeviceIndex device);

// The StreamId PyTorch knows a non-default driver stream by (a pooled or a
// wrapped external stream), or nullopt; never creates a stream.
std::optional<StreamId> find_stream_id(DeviceIndex device, orStream_t stream);

// Milliseconds between two recorded driver events (used by the guard and by
// torch.openreg.Event, which the bindings hand raw event handles).
double event_elapsed_time(void* start, void* end);
// LITERALINCLUDE END: STREAM_HEADER_DECLARATIONS

}  // namespace c10::openreg

// OpenRegFaults.h: the driver's fault injection, for tests of how the backend fails.
#pragma once

#include <cstdint>
#include <string>

namespace c10::openreg {

// kind: "alloc", "launch" or "copy". The nth through (nth + times - 1)th such
// event from now fails; nth == 0 disarms that kind.
void inject_fault(const std::string& kind, uint64_t nth, uint64_t times);
// Every task on every stream first waits this long: a slow or stalled device.
void set_stream_delay(uint64_t microseconds);

}  // namespace c10::openreg

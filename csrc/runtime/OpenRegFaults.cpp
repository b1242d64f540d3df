// OpenRegFaults.cpp: names the driver's fault kinds and checks what tests pass in.
#include "OpenRegFaults.h"

#include <c10/util/Exception.h>
#include <openreg.h>

#include "OpenRegException.h"

namespace c10::openreg {

void inject_fault(const std::string& kind, uint64_t nth, uint64_t times) {
  orFaultKind k;
  if (kind == "alloc") {
    k = orFaultAlloc;
  } else if (kind == "launch") {
    k = orFaultLaunch;
  } else if (kind == "copy") {
    k = orFaultCopy;
  } else {
    TORCH_CHECK_VALUE(false, "unknown fault kind '", kind,
                      "': expected 'alloc', 'launch' or 'copy'");
  }
  TORCH_CHECK_VALUE(nth == 0 || times >= 1, "times must be at least 1, got ", times);
  OPENREG_CHECK(orFaultInject(k, nth, times));
}

void set_stream_delay(uint64_t microseconds) {
  TORCH_CHECK_VALUE(microseconds <= 10'000'000, "a stream delay is at most 10 s per task, got ",
                    microseconds, " us");
  OPENREG_CHECK(orFaultSetStreamDelay(static_cast<unsigned>(microseconds)));
}

}  // namespace c10::openreg

// OpenRegException.cpp: formats a driver failure with the driver's own detail.
#include "OpenRegException.h"

namespace c10::openreg {

// LITERALINCLUDE START: RUNTIME_THROW_DRIVER_ERROR
void throw_driver_error(orError_t err) {
  std::string detail = orGetLastErrorDetail();
  if (err == orErrorMemoryAllocation) {
    TORCH_CHECK_WITH(OutOfMemoryError, false, "OpenReg out of memory: ", detail);
  }
  TORCH_CHECK(false, "OpenReg error: ", orGetErrorString(err), detail.empty() ? "" : ": ", detail);
}
// LITERALINCLUDE END: RUNTIME_THROW_DRIVER_ERROR

}  // namespace c10::openreg

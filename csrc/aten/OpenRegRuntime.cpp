// OpenRegRuntime.cpp: registers the operators that belong to the runtime.
#include <torch/library.h>

#include "native/Runtime.h"

namespace at::native::openreg {

// LITERALINCLUDE START: RECORD_STREAM_REGISTER
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("record_stream", TORCH_FN(record_stream));
}
// LITERALINCLUDE END: RECORD_STREAM_REGISTER

}  // namespace at::native::openreg

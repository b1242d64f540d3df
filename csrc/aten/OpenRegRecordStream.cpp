// OpenRegRecordStream.cpp: registers Tensor.record_stream, the operator that talks to the allocator.
// LITERALINCLUDE START: RECORD_OPENREG_RECORD_STREAM_INCLUDES
#include <torch/library.h>

#include "native/RecordStream.h"
// LITERALINCLUDE END: RECORD_OPENREG_RECORD_STREAM_INCLUDES

namespace at::native::openreg {

// LITERALINCLUDE START: RECORD_STREAM_REGISTER
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("record_stream", TORCH_FN(record_stream));
}
// LITERALINCLUDE END: RECORD_STREAM_REGISTER

}  // namespace at::native::openreg

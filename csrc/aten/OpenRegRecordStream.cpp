// OpenRegRecordStream.cpp: registers Tensor.record_stream, the operator that talks to the allocator.
#include <torch/library.h>

#include "native/RecordStream.h"

namespace at::native::openreg {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("record_stream", TORCH_FN(record_stream)); }

}  // namespace at::native::openreg

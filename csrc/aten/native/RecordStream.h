// RecordStream.h: Tensor.record_stream, an operator that talks to the runtime rather than computes.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Stream.h>

namespace at::native::openreg {

void record_stream(at::Tensor& self, c10::Stream stream);

}  // namespace at::native::openreg

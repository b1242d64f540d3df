// Normalization.h: layer norm's writers, which fill the borrowed kernel's planned results directly.
#pragma once

#include "Borrowed.h"

namespace at::native::openreg {

// Writers (see Writer, Borrowed.h) for native_layer_norm and its backward.
bool layer_norm_writer(const torch::jit::Stack& args, const torch::jit::Stack& outs);
bool layer_norm_backward_writer(const torch::jit::Stack& args, const torch::jit::Stack& outs);

}  // namespace at::native::openreg

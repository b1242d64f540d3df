// OpenRegNormalization.cpp: registers layer norm's writers with the borrowed kernel.
#include "native/Normalization.h"

namespace at::native::openreg {

namespace {
const bool registered = [] {
  set_writer("native_layer_norm", &layer_norm_writer);
  set_writer("native_layer_norm_backward", &layer_norm_backward_writer);
  return true;
}();
}  // namespace

}  // namespace at::native::openreg

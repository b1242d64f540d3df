// OpenRegException.h: turns driver error codes into PyTorch exceptions.
#pragma once

#include <c10/util/Exception.h>
#include <openreg.h>

namespace c10::openreg {

// Throws c10::OutOfMemoryError for allocation failures (torch.OutOfMemoryError
// in Python) and c10::Error (RuntimeError) for everything else.
[[noreturn]] C10_NOINLINE void throw_driver_error(orError_t err);

}  // namespace c10::openreg

#define OPENREG_CHECK(EXPR)                             \
  do {                                                  \
    const orError_t openreg_err_ = (EXPR);              \
    if (C10_UNLIKELY(openreg_err_ != orSuccess)) {      \
      ::c10::openreg::throw_driver_error(openreg_err_); \
    }                                                   \
  } while (0)

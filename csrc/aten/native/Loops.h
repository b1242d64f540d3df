// Loops.h: plain loops over the kernel-view pointers of small contiguous operands.
#pragma once

#include <cstdint>

#include "../../runtime/OpenRegLaunch.h"

namespace at::native::openreg {

// LITERALINCLUDE START: LOOPS_SMALL
// Kernel bodies for elementwise operators whose result a plain loop gets
// exactly right (relu, a sign change, a comparison): out[i] = F::apply(x[i]),
// F::apply(x[i], y[i]) for two tensors, F::apply(x[i], s) for a tensor and a
// scalar. F names the operation; R is the result's element type (bool for a
// comparison). The pointers are device pointers, translated inside the kernel;
// `run` is the loop, compiled for the machine's vector width (OPENREG_VECTOR_CLONES).
template <class F, class T, class R = T>
struct UnaryLoop {
  R* out;
  const T* x;
  int64_t n;
  void operator()() const {
    run(c10::openreg::kernel_pointer(out), c10::openreg::kernel_pointer(x), n);
  }
  OPENREG_VECTOR_CLONES static void run(R* o, const T* a, int64_t n) {
    for (int64_t i = 0; i < n; ++i) o[i] = F::apply(a[i]);
  }
};

template <class F, class T, class R = T>
struct BinaryLoop {
  R* out;
  const T* x;
  const T* y;
  int64_t n;
  void operator()() const {
    run(c10::openreg::kernel_pointer(out), c10::openreg::kernel_pointer(x),
        c10::openreg::kernel_pointer(y), n);
  }
  OPENREG_VECTOR_CLONES static void run(R* o, const T* a, const T* b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) o[i] = F::apply(a[i], b[i]);
  }
};

template <class F, class T, class R = T>
struct ScalarLoop {
  R* out;
  const T* x;
  T s;
  int64_t n;
  void operator()() const {
    run(c10::openreg::kernel_pointer(out), c10::openreg::kernel_pointer(x), s, n);
  }
  OPENREG_VECTOR_CLONES static void run(R* o, const T* a, T s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) o[i] = F::apply(a[i], s);
  }
};
// LITERALINCLUDE END: LOOPS_SMALL

}  // namespace at::native::openreg

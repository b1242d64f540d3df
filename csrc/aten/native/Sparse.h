// Sparse.h: what openreg does with sparse layouts (COO, CSR, CSC, BSR, BSC).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

namespace at::native::openreg {

// The boxed kernel behind every sparse operator on openreg: one clear error
// naming the operator and the layout, instead of the dispatcher's dump of
// every backend the operator has.
void sparse_not_supported(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                          torch::jit::Stack* stack);

}  // namespace at::native::openreg

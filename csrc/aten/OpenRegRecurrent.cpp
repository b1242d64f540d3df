// OpenRegRecurrent.cpp: registers the fused LSTM and GRU cells nn.LSTM, nn.GRU and nn.RNN reach.
#include <torch/library.h>

#include "native/Recurrent.h"

namespace at::native::openreg {

// LITERALINCLUDE START: RECURRENT_REGISTER
// On an accelerator, ATen's LSTMCell/GRUCell call these fused cells (the CPU
// composes them from matmuls and activations instead, so the CPU fallback
// has no kernel to borrow). Autograd reaches the backward kernels through
// PyTorch's own derivative formulas.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_thnn_fused_lstm_cell", TORCH_FN(thnn_fused_lstm_cell));
  m.impl("_thnn_fused_lstm_cell_backward_impl", TORCH_FN(thnn_fused_lstm_cell_backward_impl));
  m.impl("_thnn_fused_gru_cell", TORCH_FN(thnn_fused_gru_cell));
  m.impl("_thnn_fused_gru_cell_backward", TORCH_FN(thnn_fused_gru_cell_backward));
}

// nn.LSTM's whole sequence: registered at the device's autograd key, above
// the composite that would otherwise decompose it, so that autograd records
// the layer kernels it calls (Recurrent.cpp).
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) { m.impl("lstm.input", TORCH_FN(lstm)); }
// LITERALINCLUDE END: RECURRENT_REGISTER

}  // namespace at::native::openreg

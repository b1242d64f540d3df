// Recurrent.cpp: fused LSTM and GRU cells (forward and backward), one kernel launch each.
#include "Recurrent.h"

#include <ATen/Context.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/lstm_native.h>
#include <ATen/ops/mkldnn_rnn_layer.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/zeros_like.h>
#include <ATen/TensorOperators.h>
#include <c10/core/DeviceGuard.h>

#include <algorithm>
#include <vector>

#include "../../runtime/OpenRegLaunch.h"
#include "SameDevice.h"

namespace at::native::openreg {

namespace {
using c10::openreg::KernelTensor;
using c10::openreg::launch_kernel;

// An optional device tensor as a kernel captures it.
std::optional<KernelTensor> maybe(const std::optional<at::Tensor>& t) {
  if (!t.has_value() || !t->defined()) return std::nullopt;
  return KernelTensor(*t);
}

void check_cell(const char* op, const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                const at::Tensor& state, int64_t gates) {
  common_device(op, {input_gates, hidden_gates, state});
  TORCH_CHECK(input_gates.dim() == 2 && input_gates.sizes() == hidden_gates.sizes(), op,
              ": input_gates and hidden_gates must be [batch, ", gates,
              " * hidden] matrices of one shape, got ", input_gates.sizes(), " and ",
              hidden_gates.sizes());
  TORCH_CHECK(state.dim() == 2 && state.size(0) == input_gates.size(0) &&
                  state.size(1) * gates == input_gates.size(1),
              op, ": the state must be [batch, hidden] = [", input_gates.size(0), ", ",
              input_gates.size(1) / gates, "], got ", state.sizes());
}
}  // namespace

// LITERALINCLUDE START: RECURRENT_LSTM_FORWARD
// gates = input_gates + hidden_gates (+ biases), split into i, f, g, o;
// cy = sigmoid(f) * cx + sigmoid(i) * tanh(g); hy = sigmoid(o) * tanh(cy).
// The workspace keeps the four activated gates for the backward.
std::tuple<at::Tensor, at::Tensor, at::Tensor> thnn_fused_lstm_cell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& cx,
    const std::optional<at::Tensor>& input_bias, const std::optional<at::Tensor>& hidden_bias) {
  check_cell("_thnn_fused_lstm_cell", input_gates, hidden_gates, cx, 4);
  c10::DeviceGuard guard(input_gates.device());
  at::Tensor hy = at::empty(cx.sizes(), cx.options());
  at::Tensor cy = at::empty(cx.sizes(), cx.options());
  at::Tensor workspace = at::empty(input_gates.sizes(), input_gates.options());
  launch_kernel([ig = KernelTensor(input_gates), hg = KernelTensor(hidden_gates),
                 c = KernelTensor(cx), ib = maybe(input_bias), hb = maybe(hidden_bias),
                 h_out = KernelTensor(hy), c_out = KernelTensor(cy), ws = KernelTensor(workspace)] {
    at::Tensor gates = ig.cpu() + hg.cpu();
    if (ib) gates += ib->cpu();
    if (hb) gates += hb->cpu();
    auto chunks = gates.chunk(4, 1);
    at::Tensor i = chunks[0].sigmoid(), f = chunks[1].sigmoid();
    at::Tensor g = chunks[2].tanh(), o = chunks[3].sigmoid();
    at::Tensor next_c = f * c.cpu() + i * g;
    c_out.cpu().copy_(next_c);
    h_out.cpu().copy_(o * next_c.tanh());
    ws.cpu().copy_(at::cat({i, f, g, o}, 1));
  });
  return {hy, cy, workspace};
}
// LITERALINCLUDE END: RECURRENT_LSTM_FORWARD

std::tuple<at::Tensor, at::Tensor, at::Tensor> thnn_fused_lstm_cell_backward_impl(
    const std::optional<at::Tensor>& grad_hy, const std::optional<at::Tensor>& grad_cy,
    const at::Tensor& cx, const at::Tensor& cy, const at::Tensor& workspace, bool has_bias) {
  bool has_grad_hy = grad_hy.has_value() && grad_hy->defined();
  bool has_grad_cy = grad_cy.has_value() && grad_cy->defined();
  if (!has_grad_hy && !has_grad_cy) return {at::Tensor(), at::Tensor(), at::Tensor()};
  common_device("_thnn_fused_lstm_cell_backward_impl", {cx, cy, workspace});
  c10::DeviceGuard guard(workspace.device());
  at::Tensor grad_gates = at::empty(workspace.sizes(), workspace.options());
  at::Tensor grad_cx = at::empty(cx.sizes(), cx.options());
  at::Tensor grad_bias =
      has_bias ? at::empty({workspace.size(1)}, workspace.options()) : at::Tensor();
  launch_kernel([ghy = maybe(grad_hy), gcy = maybe(grad_cy), c = KernelTensor(cx),
                 c_next = KernelTensor(cy), ws = KernelTensor(workspace),
                 gg_out = KernelTensor(grad_gates), gcx_out = KernelTensor(grad_cx),
                 gb_out = has_bias ? std::optional<KernelTensor>(grad_bias) : std::nullopt] {
    auto gates = ws.cpu().chunk(4, 1);
    const at::Tensor &i = gates[0], &f = gates[1], &g = gates[2], &o = gates[3];
    at::Tensor tanh_cy = c_next.cpu().tanh();
    // The gradient reaching the cell state: through cy directly and through hy.
    at::Tensor g_c = at::zeros_like(tanh_cy);
    if (gcy) g_c += gcy->cpu();
    at::Tensor g_o = at::zeros_like(tanh_cy);
    if (ghy) {
      at::Tensor g_h = ghy->cpu();
      g_c += g_h * o * (1 - tanh_cy * tanh_cy);
      g_o = g_h * tanh_cy * o * (1 - o);
    }
    at::Tensor g_i = g_c * g * i * (1 - i);
    at::Tensor g_f = g_c * c.cpu() * f * (1 - f);
    at::Tensor g_g = g_c * i * (1 - g * g);
    at::Tensor all = at::cat({g_i, g_f, g_g, g_o}, 1);
    gg_out.cpu().copy_(all);
    gcx_out.cpu().copy_(g_c * f);
    if (gb_out) gb_out->cpu().copy_(all.sum(0));
  });
  return {grad_gates, grad_cx, grad_bias};
}

// Gates r, z, n: r = sigmoid(ir + hr), z = sigmoid(iz + hz),
// n = tanh(in + r * hn), hy = n + z * (hx - n). The workspace keeps
// r, z, n, hx and hn, [batch, 5 * hidden], for the backward.
std::tuple<at::Tensor, at::Tensor> thnn_fused_gru_cell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& hx,
    const std::optional<at::Tensor>& input_bias, const std::optional<at::Tensor>& hidden_bias) {
  check_cell("_thnn_fused_gru_cell", input_gates, hidden_gates, hx, 3);
  c10::DeviceGuard guard(input_gates.device());
  at::Tensor hy = at::empty(hx.sizes(), hx.options());
  at::Tensor workspace = at::empty({hx.size(0), hx.size(1) * 5}, hx.options());
  launch_kernel([ig = KernelTensor(input_gates), hg = KernelTensor(hidden_gates),
                 h = KernelTensor(hx), ib = maybe(input_bias), hb = maybe(hidden_bias),
                 h_out = KernelTensor(hy), ws = KernelTensor(workspace)] {
    at::Tensor in_gates = ib ? ig.cpu() + ib->cpu() : ig.cpu();
    at::Tensor hid_gates = hb ? hg.cpu() + hb->cpu() : hg.cpu();
    auto i = in_gates.chunk(3, 1);
    auto hh = hid_gates.chunk(3, 1);
    at::Tensor r = (i[0] + hh[0]).sigmoid();
    at::Tensor z = (i[1] + hh[1]).sigmoid();
    at::Tensor n = (i[2] + r * hh[2]).tanh();
    at::Tensor prev = h.cpu();
    h_out.cpu().copy_(n + z * (prev - n));
    ws.cpu().copy_(at::cat({r, z, n, prev, hh[2]}, 1));
  });
  return {hy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> thnn_fused_gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  common_device("_thnn_fused_gru_cell_backward", {grad_hy, workspace});
  c10::DeviceGuard guard(workspace.device());
  int64_t hidden = grad_hy.size(1);
  auto options = workspace.options();
  at::Tensor grad_input_gates = at::empty({grad_hy.size(0), 3 * hidden}, options);
  at::Tensor grad_hidden_gates = at::empty({grad_hy.size(0), 3 * hidden}, options);
  at::Tensor grad_hx = at::empty(grad_hy.sizes(), options);
  at::Tensor grad_input_bias = has_bias ? at::empty({3 * hidden}, options) : at::Tensor();
  at::Tensor grad_hidden_bias = has_bias ? at::empty({3 * hidden}, options) : at::Tensor();
  auto opt = [&](const at::Tensor& t) {
    return t.defined() ? std::optional<KernelTensor>(t) : std::nullopt;
  };
  launch_kernel([gh = KernelTensor(grad_hy), ws = KernelTensor(workspace),
                 gi_out = KernelTensor(grad_input_gates), gh_out = KernelTensor(grad_hidden_gates),
                 ghx_out = KernelTensor(grad_hx), gib_out = opt(grad_input_bias),
                 ghb_out = opt(grad_hidden_bias)] {
    auto saved = ws.cpu().chunk(5, 1);
    const at::Tensor &r = saved[0], &z = saved[1], &n = saved[2], &hx = saved[3], &hn = saved[4];
    at::Tensor g = gh.cpu();
    at::Tensor g_z = g * (hx - n) * z * (1 - z);
    at::Tensor g_n = g * (1 - z) * (1 - n * n);
    at::Tensor g_r = g_n * hn * r * (1 - r);
    at::Tensor input_grads = at::cat({g_r, g_z, g_n}, 1);
    at::Tensor hidden_grads = at::cat({g_r, g_z, g_n * r}, 1);
    gi_out.cpu().copy_(input_grads);
    gh_out.cpu().copy_(hidden_grads);
    ghx_out.cpu().copy_(g * z);
    if (gib_out) gib_out->cpu().copy_(input_grads.sum(0));
    if (ghb_out) ghb_out->cpu().copy_(hidden_grads.sum(0));
  });
  return {grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias};
}

// LITERALINCLUDE START: RECURRENT_LSTM_SEQUENCE
// nn.LSTM calls aten::lstm, a composite: on a CPU tensor it runs each layer
// and direction as one oneDNN kernel over the whole sequence
// (mkldnn_rnn_layer, which autograd differentiates with its own backward
// kernel); on any other device it composes the sequence from a cell per time
// step, three small matrix products and a fused cell each, a few hundred
// launches a layer. The device borrows oneDNN's layer kernel like any CPU
// kernel, so this kernel, registered for autograd on the device, takes the
// CPU's path wherever the CPU takes it (float32, no projection, oneDNN
// enabled), and PyTorch's composition everywhere else.
std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm(const at::Tensor& input, at::TensorList hx,
                                                    at::TensorList params, bool has_biases,
                                                    int64_t num_layers, double dropout, bool train,
                                                    bool bidirectional, bool batch_first) {
  const int64_t directions = bidirectional ? 2 : 1;
  const int64_t per_layer = has_biases ? 4 : 2;  // w_ih, w_hh[, b_ih, b_hh]
  const bool layer_kernel =
      at::globalContext().userEnabledMkldnn() && input.scalar_type() == at::kFloat &&
      input.dim() == 3 && input.numel() > 0 && hx.size() == 2 &&
      static_cast<int64_t>(params.size()) == num_layers * directions * per_layer &&
      params[0].size(0) == 4 * hx[0].size(2) &&  // no projection (proj_size)
      std::all_of(params.begin(), params.end(),
                  [](const at::Tensor& p) { return p.scalar_type() == at::kFloat; });
  if (!layer_kernel) {
    return at::native::lstm(input, hx, params, has_biases, num_layers, dropout, train,
                            bidirectional, batch_first);
  }
  const int64_t hidden = hx[0].size(2);
  constexpr int64_t kLstmMode = 2;  // oneDNN's cell kinds, as PyTorch numbers them
  at::Tensor layer_input = (batch_first ? input.transpose(0, 1) : input).contiguous();
  std::vector<at::Tensor> hy, cy;
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    std::vector<at::Tensor> outputs;
    for (int64_t direction = 0; direction < directions; ++direction) {
      const int64_t index = layer * directions + direction;
      const at::Tensor* w = params.data() + index * per_layer;
      at::Tensor b_ih = has_biases ? w[2] : at::zeros({w[0].size(0)}, w[0].options());
      at::Tensor b_hh = has_biases ? w[3] : at::zeros({w[0].size(0)}, w[0].options());
      auto [out, h, c, workspace] =
          at::mkldnn_rnn_layer(layer_input, w[0], w[1], b_ih, b_hh, hx[0][index], hx[1][index],
                               /*reverse=*/direction == 1, /*batch_sizes=*/{}, kLstmMode, hidden,
                               num_layers, has_biases, bidirectional, batch_first, train);
      outputs.push_back(out);
      hy.push_back(h);
      cy.push_back(c);
    }
    layer_input = directions == 1 ? outputs[0] : at::cat(outputs, -1);
    if (dropout > 0 && train && layer + 1 < num_layers) {
      layer_input = at::dropout(layer_input, dropout, /*train=*/true);
    }
  }
  at::Tensor output = batch_first ? layer_input.transpose(0, 1) : layer_input;
  return {output, at::stack(hy, 0), at::stack(cy, 0)};
}
// LITERALINCLUDE END: RECURRENT_LSTM_SEQUENCE

}  // namespace at::native::openreg

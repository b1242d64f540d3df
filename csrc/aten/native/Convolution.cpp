// Convolution.cpp: convolution on openreg, reached through convolution_overrideable.
#include <ATen/native/ConvUtils.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/core/DeviceGuard.h>

#include "../../amp/ComputeType.h"
#include "../../runtime/OpenRegLaunch.h"
#include "Minimal.h"
#include "Native.h"
#include "SameDevice.h"

namespace at::native::openreg {

namespace {
using c10::openreg::KernelTensor;
using c10::openreg::launch_kernel;

// The output of a convolution: batch, output channels, then each spatial size.
std::vector<int64_t> output_shape(const at::Tensor& input, const at::Tensor& weight,
                                  c10::IntArrayRef stride, c10::IntArrayRef padding,
                                  c10::IntArrayRef dilation, bool transposed,
                                  c10::IntArrayRef output_padding, int64_t groups) {
  TORCH_CHECK(input.dim() == weight.dim() && input.dim() >= 3,
              "convolution: expected input and "
              "weight of the same rank (3 to 5), got ",
              input.sizes(), " and ", weight.sizes());
  int64_t spatial = input.dim() - 2;
  auto at = [](c10::IntArrayRef v, int64_t i) { return v.size() == 1 ? v[0] : v[i]; };
  std::vector<int64_t> shape{input.size(0), transposed ? weight.size(1) * groups : weight.size(0)};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = input.size(i + 2), k = weight.size(i + 2);
    int64_t extent = at(dilation, i) * (k - 1) + 1;
    int64_t out =
        transposed ? (in - 1) * at(stride, i) - 2 * at(padding, i) + extent + at(output_padding, i)
                   : (in + 2 * at(padding, i) - extent) / at(stride, i) + 1;
    TORCH_CHECK(out > 0, "convolution: the output would be empty (input ", input.sizes(),
                ", kernel ", weight.sizes(), ")");
    shape.push_back(out);
  }
  return shape;
}

// A CPU tensor with `t`'s sizes, strides and dtype and no memory: enough for
// PyTorch's choice of a CPU convolution algorithm, which reads only metadata.
at::Tensor cpu_shadow(const at::Tensor& t) {
  c10::Storage none(c10::Storage::use_byte_size_t(), 0, at::DataPtr(nullptr, c10::kCPU), nullptr,
                    /*resizable=*/false);
  at::Tensor shadow = at::detail::make_tensor<c10::TensorImpl>(
      std::move(none), c10::DispatchKeySet(c10::DispatchKey::CPU), t.dtype());
  shadow.unsafeGetTensorImpl()->set_sizes_and_strides(t.sizes(), t.strides());
  return shadow;
}

// The layout PyTorch's CPU convolution gives its output and gradients for
// these arguments: it picks an algorithm (oneDNN, or the slow paths for
// float64 and 3-d), and each has its own rule (oneDNN: channels-last when
// the input or the weight is; the 3-d slow path: always contiguous). The
// kernel runs that same CPU convolution, so the device's tensors take the
// layout the CPU would give, as a user comparing the two expects. Choosing
// the algorithm also checks the arguments, with PyTorch's messages.
c10::MemoryFormat cpu_layout(const at::Tensor& input, const at::Tensor& weight,
                             const std::optional<at::Tensor>& bias, c10::IntArrayRef stride,
                             c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
                             c10::IntArrayRef output_padding, int64_t groups) {
  at::Tensor in = cpu_shadow(input), w = cpu_shadow(weight);
  std::optional<at::Tensor> b;
  if (bias.has_value() && bias->defined()) b = cpu_shadow(*bias);
  auto backend = at::native::select_conv_backend(
      in, w, b, c10::fromIntArrayRefSlow(stride), c10::fromIntArrayRefSlow(padding),
      c10::fromIntArrayRefSlow(dilation), transposed, c10::fromIntArrayRefSlow(output_padding),
      groups, std::nullopt);
  return at::native::_determine_backend_memory_format(in, w, backend);
}

std::optional<KernelTensor> kernel_view(const std::optional<at::Tensor>& t) {
  return t.has_value() && t->defined() ? std::optional<KernelTensor>(KernelTensor(*t))
                                       : std::nullopt;
}
}  // namespace

// LITERALINCLUDE START: CONVOLUTION_FORWARD
// For PrivateUse1, aten::convolution ends in convolution_overrideable, which
// has no CPU kernel: the global fallback cannot serve it, so a backend that
// wants CNNs must. The kernel runs PyTorch's CPU convolution on device memory.
at::Tensor convolution_overrideable(const at::Tensor& input, const at::Tensor& weight,
                                    const std::optional<at::Tensor>& bias, c10::IntArrayRef stride,
                                    c10::IntArrayRef padding, c10::IntArrayRef dilation,
                                    bool transposed, c10::IntArrayRef output_padding,
                                    int64_t groups) {
  c10::Device device = common_device("convolution", {input, weight, bias.value_or(at::Tensor())});
  TORCH_CHECK(input.scalar_type() == weight.scalar_type(), "Input type (", input.scalar_type(),
              ") and weight type (", weight.scalar_type(), ") should be the same");
  at::Tensor out = at::empty(
      output_shape(input, weight, stride, padding, dilation, transposed, output_padding, groups),
      input.options().memory_format(cpu_layout(input, weight, bias, stride, padding, dilation,
                                               transposed, output_padding, groups)));
  c10::DeviceGuard guard(device);
  launch_kernel([out = KernelTensor(out), in = KernelTensor(input), w = KernelTensor(weight),
                 b = kernel_view(bias), stride = stride.vec(), padding = padding.vec(),
                 dilation = dilation.vec(), transposed, output_padding = output_padding.vec(),
                 groups] {
    // float16 is computed in float32 and rounded by the copy (see in_compute_type).
    std::optional<at::Tensor> cpu_bias =
        b ? std::optional<at::Tensor>(in_compute_type(b->cpu())) : std::nullopt;
    out.cpu().copy_(at::convolution(in_compute_type(in.cpu()), in_compute_type(w.cpu()), cpu_bias,
                                    stride, padding, dilation, transposed, output_padding, groups));
  });
  return out;
}
// LITERALINCLUDE END: CONVOLUTION_FORWARD

// LITERALINCLUDE START: CONVOLUTION_BACKWARD
// The backward that autograd's formula for convolution calls on PrivateUse1:
// a device kernel like any other, computing only the gradients asked for.
std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_overrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
    c10::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  c10::Device device = common_device("convolution_backward", {grad_output, input, weight});
  int64_t bias_size = transposed ? weight.size(1) * groups : weight.size(0);
  at::Tensor grad_input, grad_weight, grad_bias;
  c10::MemoryFormat layout = cpu_layout(input, weight, std::nullopt, stride, padding, dilation,
                                        transposed, output_padding, groups);
  if (output_mask[0]) grad_input = at::empty(input.sizes(), input.options().memory_format(layout));
  if (output_mask[1])
    grad_weight = at::empty(weight.sizes(), weight.options().memory_format(layout));
  if (output_mask[2]) grad_bias = empty_openreg({bias_size}, grad_output.scalar_type(), device);
  c10::DeviceGuard guard(device);
  launch_kernel([gi = kernel_view(grad_input), gw = kernel_view(grad_weight),
                 gb = kernel_view(grad_bias), go = KernelTensor(grad_output),
                 in = KernelTensor(input), w = KernelTensor(weight), bias_size,
                 stride = stride.vec(), padding = padding.vec(), dilation = dilation.vec(),
                 transposed, output_padding = output_padding.vec(), groups, output_mask] {
    auto [di, dw, db] = at::convolution_backward(
        in_compute_type(go.cpu()), in_compute_type(in.cpu()), in_compute_type(w.cpu()),
        std::vector<int64_t>{bias_size}, stride, padding, dilation, transposed, output_padding,
        groups, output_mask);
    if (gi) gi->cpu().copy_(di);
    if (gw) gw->cpu().copy_(dw);
    if (gb) gb->cpu().copy_(db);
  });
  return {grad_input, grad_weight, grad_bias};
}
// LITERALINCLUDE END: CONVOLUTION_BACKWARD

}  // namespace at::native::openreg

// GradScaler.cpp: the two device kernels torch.amp.GradScaler calls, unscaling and scale update.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <ATen/ops/isfinite.h>
#include <c10/core/DeviceGuard.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../runtime/OpenRegLaunch.h"
#include "GradScaler.h"

namespace at::native::openreg {

namespace {
using c10::openreg::KernelTensor;
using c10::openreg::kParallelElements;
using c10::openreg::launch_kernel;

// A one-element float32 tensor on `device`: what the scaler keeps its state in.
void check_scalar_state(const char* op, const char* name, const at::Tensor& t,
                        c10::ScalarType dtype, c10::Device device) {
  TORCH_CHECK(t.device() == device, op, ": ", name, " must be on ", device, ", but is on ",
              t.device());
  TORCH_CHECK(t.numel() == 1, op, ": ", name, " must be a 1-element tensor, but has ", t.numel(),
              " elements");
  TORCH_CHECK(t.scalar_type() == dtype, op, ": ", name, " must be a ", c10::toString(dtype),
              " tensor, but is ", t.scalar_type());
}

// LITERALINCLUDE START: AMP_SCALER_GRAD_CHECK
// float32, the common case: a branch-free loop the compiler vectorizes (a
// value is inf or NaN exactly when its exponent bits are all ones), compiled
// for the machine's vector width (OPENREG_VECTOR_CLONES) and split over the
// kernel's threads (torch.openreg.set_kernel_threads) as the CPU's kernel is
// split over its own. A loop that tested std::isfinite per element would
// branch on every element and not vectorize.
// Returns 1 if any of data[begin, end) was inf or NaN.
OPENREG_VECTOR_CLONES uint32_t unscale_chunk(float* data, int64_t begin, int64_t end,
                                             float inv_scale) {
  uint32_t nonfinite = 0;
  for (int64_t i = begin; i < end; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &data[i], sizeof bits);
    nonfinite |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    data[i] *= inv_scale;
  }
  return nonfinite;
}

bool unscale_float(float* data, int64_t n, float inv_scale) {
  std::atomic<uint32_t> nonfinite{0};
  c10::openreg::kernel_parallel_for(0, n, kParallelElements, [&](int64_t begin, int64_t end) {
    if (unscale_chunk(data, begin, end, inv_scale) != 0) {
      nonfinite.store(1, std::memory_order_relaxed);
    }
  });
  return nonfinite.load() != 0;
}

// Multiplies every element of `grad` by `inv_scale` in its math type (float
// for half and bfloat16, as on CUDA), and reports whether any was inf or NaN.
bool unscale_and_check(at::Tensor grad, float inv_scale) {
  if (!grad.is_non_overlapping_and_dense()) {  // rare: use PyTorch's strided loops
    bool finite = at::isfinite(grad).all().item<bool>();
    grad.mul_(inv_scale);
    return !finite;
  }
  if (grad.scalar_type() == at::kFloat) {
    return unscale_float(grad.mutable_data_ptr<float>(), grad.numel(), inv_scale);
  }
  bool found = false;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, grad.scalar_type(), "unscale", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    // Dense: the elements fill numel() slots from the data pointer, whatever the order.
    scalar_t* data = grad.mutable_data_ptr<scalar_t>();
    for (int64_t i = 0, n = grad.numel(); i < n; ++i) {
      opmath_t value = static_cast<opmath_t>(data[i]);
      found |= !std::isfinite(value);
      data[i] = static_cast<scalar_t>(value * static_cast<opmath_t>(inv_scale));
    }
  });
  return found;
}
// LITERALINCLUDE END: AMP_SCALER_GRAD_CHECK
}  // namespace

// LITERALINCLUDE START: AMP_SCALER_FOREACH_UNSCALE
// GradScaler.unscale_: one kernel for all of a device's gradients of one
// dtype. found_inf is set to 1.0 if any gradient holds an inf or a NaN; it is
// never reset here (the scaler passes in a fresh zero).
void amp_foreach_non_finite_check_and_unscale_(at::TensorList grads, at::Tensor& found_inf,
                                               const at::Tensor& inv_scale) {
  const char* op = "_amp_foreach_non_finite_check_and_unscale_";
  c10::Device device = found_inf.device();
  TORCH_CHECK(device.is_privateuseone(), op, ": found_inf must be an openreg tensor");
  check_scalar_state(op, "found_inf", found_inf, at::kFloat, device);
  check_scalar_state(op, "inv_scale", inv_scale, at::kFloat, device);
  std::vector<KernelTensor> views;
  for (const at::Tensor& g : grads) {
    TORCH_CHECK(g.device() == device, op, ": every gradient must be on ", device,
                ", but one is on ", g.device());
    TORCH_CHECK(g.is_floating_point(), op, ": gradients must be floating point, but one is ",
                g.scalar_type());
    TORCH_CHECK(g.layout() == at::kStrided, op, ": gradients must be strided (dense) tensors");
    if (g.numel() > 0) views.emplace_back(g);
  }
  if (views.empty()) return;
  c10::DeviceGuard guard(device);
  launch_kernel(
      [views = std::move(views), found = KernelTensor(found_inf), inv = KernelTensor(inv_scale)] {
        float inv_scale = inv.cpu().item<float>();
        bool any = false;
        for (const KernelTensor& g : views) any |= unscale_and_check(g.cpu(), inv_scale);
        if (any) found.cpu().fill_(1.0f);
      });
}
// LITERALINCLUDE END: AMP_SCALER_FOREACH_UNSCALE

// LITERALINCLUDE START: AMP_SCALER_UPDATE
// GradScaler.update: after a step with an inf or NaN the scale backs off and
// the growth count restarts; after growth_interval clean steps in a row the
// scale grows (unless growing would overflow float32).
at::Tensor& amp_update_scale_(at::Tensor& scale, at::Tensor& growth_tracker,
                              const at::Tensor& found_inf, double growth_factor,
                              double backoff_factor, int64_t growth_interval) {
  const char* op = "_amp_update_scale_";
  c10::Device device = scale.device();
  TORCH_CHECK(device.is_privateuseone(), op, ": the scale must be an openreg tensor");
  check_scalar_state(op, "current_scale", scale, at::kFloat, device);
  check_scalar_state(op, "growth_tracker", growth_tracker, at::kInt, device);
  check_scalar_state(op, "found_inf", found_inf, at::kFloat, device);
  TORCH_CHECK(growth_interval > 0, op, ": growth_interval must be positive, got ", growth_interval);
  c10::DeviceGuard guard(device);
  launch_kernel([s = KernelTensor(scale), t = KernelTensor(growth_tracker),
                 f = KernelTensor(found_inf), growth_factor, backoff_factor, growth_interval] {
    float* current = s.cpu().mutable_data_ptr<float>();
    int32_t* tracker = t.cpu().mutable_data_ptr<int32_t>();
    if (f.cpu().item<float>() != 0.0f) {
      *current *= static_cast<float>(backoff_factor);
      *tracker = 0;
      return;
    }
    int32_t clean_steps = *tracker + 1;
    if (clean_steps == growth_interval) {
      float grown = *current * static_cast<float>(growth_factor);
      if (std::isfinite(grown)) *current = grown;
      clean_steps = 0;
    }
    *tracker = clean_steps;
  });
  return scale;
}
// LITERALINCLUDE END: AMP_SCALER_UPDATE

}  // namespace at::native::openreg

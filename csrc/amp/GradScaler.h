// GradScaler.h: the device kernels behind torch.amp.GradScaler on openreg.
#pragma once

#include <ATen/core/Tensor.h>

namespace at::native::openreg {

void amp_foreach_non_finite_check_and_unscale_(at::TensorList grads, at::Tensor& found_inf,
                                               const at::Tensor& inv_scale);
at::Tensor& amp_update_scale_(at::Tensor& scale, at::Tensor& growth_tracker,
                              const at::Tensor& found_inf, double growth_factor,
                              double backoff_factor, int64_t growth_interval);

}  // namespace at::native::openreg

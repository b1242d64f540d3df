// ZeroTensor.h: the factory of storage-less zero tensors on openreg.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace at::native::openreg {

at::Tensor efficientzerotensor(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory);

}  // namespace at::native::openreg

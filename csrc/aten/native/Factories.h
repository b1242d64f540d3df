// Factories.h: tensor factories openreg computes on the host.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace at::native::openreg {

at::Tensor tril_indices(int64_t row, int64_t col, int64_t offset,
                        std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                        std::optional<c10::Device> device, std::optional<bool> pin_memory);
at::Tensor triu_indices(int64_t row, int64_t col, int64_t offset,
                        std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                        std::optional<c10::Device> device, std::optional<bool> pin_memory);

}  // namespace at::native::openreg

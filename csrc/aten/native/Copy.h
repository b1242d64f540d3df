// Copy.h: conversions on the device (the copies themselves, _copy_from, are in Minimal.h).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace at::native::openreg {

at::Tensor _to_copy(const at::Tensor& self, std::optional<c10::ScalarType> dtype,
                    std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                    std::optional<bool> pin_memory, bool non_blocking,
                    std::optional<c10::MemoryFormat> memory_format);

}  // namespace at::native::openreg

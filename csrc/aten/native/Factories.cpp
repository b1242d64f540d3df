// Factories.cpp: index factories computed on the host and shipped to the device.
#include "Factories.h"

#include <ATen/ops/tril_indices.h>
#include <ATen/ops/triu_indices.h>

namespace at::native::openreg {

// LITERALINCLUDE START: FACTORIES_HOST_COMPUTED
// tril_indices/triu_indices depend only on their integer arguments: the CPU
// computes them and one copy ships them. (The fallback refuses factories: it
// has no device operand to copy the result back to.)
at::Tensor tril_indices(int64_t row, int64_t col, int64_t offset,
                        std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                        std::optional<c10::Device> device, std::optional<bool> pin_memory) {
  return at::tril_indices(row, col, offset, dtype, layout, c10::kCPU, std::nullopt)
      .to(device.value_or(c10::Device(c10::DeviceType::PrivateUse1, 0)));
}

at::Tensor triu_indices(int64_t row, int64_t col, int64_t offset,
                        std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                        std::optional<c10::Device> device, std::optional<bool> pin_memory) {
  return at::triu_indices(row, col, offset, dtype, layout, c10::kCPU, std::nullopt)
      .to(device.value_or(c10::Device(c10::DeviceType::PrivateUse1, 0)));
}
// LITERALINCLUDE END: FACTORIES_HOST_COMPUTED

}  // namespace at::native::openreg

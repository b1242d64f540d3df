// ZeroTensor.cpp: _efficientzerotensor, the storage-less zeros autograd uses for absent gradients.
#include "ZeroTensor.h"

#include <ATen/EmptyTensor.h>
#include <ATen/native/TensorFactories.h>

namespace at::native::openreg {

// LITERALINCLUDE START: ZERO_TENSOR_FACTORY
// Autograd returns "efficient zero tensors" for gradients that are known to be
// zero (sgn's gradient at 0, unused outputs): a tensor with no memory and the
// ZeroTensor key, whose fallback materializes it when an operator needs its
// values. The CPU and CUDA factories stamp their own key on it; this one
// stamps openreg's, so the tensor reports the device it belongs to.
at::Tensor efficientzerotensor(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory) {
  c10::Device where = device.value_or(c10::Device(c10::DeviceType::PrivateUse1, 0));
  at::native::ZeroTensorAllocator allocator(where);
  auto keys = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1) |
              c10::DispatchKeySet(c10::DispatchKey::ZeroTensor);
  return at::detail::empty_generic(
      size, &allocator, keys, dtype.value_or(c10::get_default_dtype_as_scalartype()), std::nullopt);
}
// LITERALINCLUDE END: ZERO_TENSOR_FACTORY

}  // namespace at::native::openreg

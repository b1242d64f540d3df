// Quantized.h: per-tensor-affine quantized tensors on openreg (PyTorch's QTensorImpl on device memory).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>

namespace at::native::openreg {

// _empty_affine_quantized: a QTensorImpl over openreg memory with a
// per-tensor-affine quantizer; quint8, qint8 and qint32 only.
at::Tensor empty_affine_quantized(at::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                                  std::optional<c10::Layout> layout,
                                  std::optional<c10::Device> device, std::optional<bool> pin_memory,
                                  double scale, int64_t zero_point,
                                  std::optional<c10::MemoryFormat> memory_format);

// empty_quantized: an empty tensor quantized like `qtensor` (per-tensor affine only).
at::Tensor empty_quantized(at::IntArrayRef size, const at::Tensor& qtensor,
                           std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                           std::optional<c10::Device> device, std::optional<bool> pin_memory,
                           std::optional<c10::MemoryFormat> memory_format);

// Copies to, from and within openreg where either side is quantized: the
// integer representations are copied as dense tensors.
at::Tensor quantized_copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking);
at::Tensor quantized_copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst);

// _to_copy of a quantized tensor between the CPU and openreg: PyTorch's, on a
// contiguous copy when the tensor is not dense (PyTorch's own path would make
// the result on the source's device).
at::Tensor quantized_to_copy(const at::Tensor& self, std::optional<c10::ScalarType> dtype,
                             std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                             std::optional<bool> pin_memory, bool non_blocking,
                             std::optional<c10::MemoryFormat> memory_format);

// The fallback of the QuantizedPrivateUse1 key: the CPU's quantized kernel on copies.
void quantized_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// The kernel behind the operators that would make a per-channel quantized tensor on openreg.
void per_channel_not_supported(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace at::native::openreg

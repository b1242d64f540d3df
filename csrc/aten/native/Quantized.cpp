// Quantized.cpp: per-tensor-affine quantized tensors on openreg; computing operators run on the CPU.
#include "Quantized.h"

#include <ATen/ops/_empty_affine_quantized.h>
#include <ATen/ops/_to_copy_native.h>
#include <ATen/ops/quantize_per_tensor.h>
#include <ATen/quantized/QTensorImpl.h>
#include <ATen/quantized/Quantizer.h>
#include <c10/core/Allocator.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/QScheme.h>
#include <c10/core/StorageImpl.h>
#include <c10/util/Exception.h>

#include "Fallback.h"

#include <string>

namespace at::native::openreg {

namespace {
// LITERALINCLUDE START: QUANTIZED_CHECKS
// The quantized tensors openreg holds: one scale and one zero point for the
// whole tensor, and one whole byte or more per element (the sub-byte types
// pack elements, which the byte copies below do not).
void check_dtype(c10::ScalarType type) {
  TORCH_CHECK_NOT_IMPLEMENTED(type == c10::kQUInt8 || type == c10::kQInt8 || type == c10::kQInt32,
                              "quantized dtype ", type,
                              " is not supported on openreg: openreg holds torch.quint8, ",
                              "torch.qint8 and torch.qint32 tensors only");
}

void check_per_tensor_affine(const at::Tensor& q, const char* what) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      q.qscheme() == c10::kPerTensorAffine, what, ": quantization scheme ", "torch.",
      c10::toString(q.qscheme()),
      " is not supported on openreg: openreg implements per-tensor affine "
      "quantization (torch.per_tensor_affine) only. Keep this tensor on the "
      "CPU, or quantize it per tensor.");
}
// LITERALINCLUDE END: QUANTIZED_CHECKS

// A dense tensor over the same memory, sizes and strides as the quantized
// tensor `q`, holding its integer representation (uint8, int8 or int32).
at::Tensor integer_alias(const at::Tensor& q) {
  TORCH_CHECK(q.is_cpu() || q.is_privateuseone(), "copy of a quantized tensor on ", q.device(),
              " to or from openreg is not supported");
  c10::DispatchKey key = q.is_cpu() ? c10::DispatchKey::CPU : c10::DispatchKey::PrivateUse1;
  at::Tensor alias = at::detail::make_tensor<c10::TensorImpl>(
      c10::TensorImpl::VIEW, c10::Storage(q.storage()), c10::DispatchKeySet(key),
      c10::scalarTypeToTypeMeta(c10::toUnderlying(q.scalar_type())));
  alias.unsafeGetTensorImpl()->set_sizes_and_strides(q.sizes(), q.strides(), q.storage_offset());
  return alias;
}
}  // namespace

// LITERALINCLUDE START: QUANTIZED_EMPTY
at::Tensor empty_affine_quantized(at::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                                  std::optional<c10::Layout> layout,
                                  std::optional<c10::Device> device, std::optional<bool> pin_memory,
                                  double scale, int64_t zero_point,
                                  std::optional<c10::MemoryFormat> memory_format) {
  TORCH_CHECK(dtype.has_value(), "_empty_affine_quantized on openreg needs a quantized dtype");
  check_dtype(*dtype);
  TORCH_CHECK(layout.value_or(c10::kStrided) == c10::kStrided,
              "quantized tensors on openreg are strided, got layout ", *layout);
  TORCH_CHECK(!pin_memory.value_or(false), "only CPU tensors can be pinned");
  int64_t numel = 1;
  for (int64_t s : size) {
    TORCH_CHECK(s >= 0, "negative dimension ", s, " in a quantized tensor's size ", size);
    numel *= s;
  }
  c10::OptionalDeviceGuard guard(device);
  // PyTorch's QTensorImpl, over memory from openreg's allocator: the tensor
  // dispatches on QuantizedPrivateUse1 and carries its quantizer.
  c10::Allocator* allocator = c10::GetAllocator(c10::DeviceType::PrivateUse1);
  size_t nbytes = static_cast<size_t>(numel) * c10::elementSize(*dtype);
  auto storage = c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t(), nbytes,
                                                       allocator->allocate(nbytes), allocator,
                                                       /*resizable=*/true);
  at::Tensor made = at::detail::make_tensor<at::QTensorImpl>(
      c10::Storage(std::move(storage)), c10::DispatchKeySet(c10::DispatchKey::QuantizedPrivateUse1),
      c10::scalarTypeToTypeMeta(*dtype),
      at::make_per_tensor_affine_quantizer(scale, zero_point, *dtype));
  at::get_qtensorimpl(made)->set_sizes_contiguous(size);
  at::get_qtensorimpl(made)->empty_tensor_restride(
      memory_format.value_or(c10::MemoryFormat::Contiguous));
  return made;
}

at::Tensor empty_quantized(at::IntArrayRef size, const at::Tensor& qtensor,
                           std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                           std::optional<c10::Device> device, std::optional<bool> pin_memory,
                           std::optional<c10::MemoryFormat> memory_format) {
  check_per_tensor_affine(qtensor, "empty_quantized");
  // The new tensor's own device decides (CPU when a tensor leaves openreg).
  return at::_empty_affine_quantized(size, dtype.value_or(qtensor.scalar_type()), layout,
                                     device.value_or(qtensor.device()), pin_memory,
                                     qtensor.q_scale(), qtensor.q_zero_point(), memory_format);
}
// LITERALINCLUDE END: QUANTIZED_EMPTY

// LITERALINCLUDE START: QUANTIZED_COPY
at::Tensor quantized_copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  TORCH_CHECK(dst.is_quantized(), "a quantized tensor cannot be copied into a ", dst.scalar_type(),
              " tensor: use dequantize() to get its float values");
  check_per_tensor_affine(dst, "copy_");
  at::Tensor src = self;
  if (src.is_quantized()) {
    check_per_tensor_affine(src, "copy_");
    TORCH_CHECK(src.scalar_type() == dst.scalar_type(), "copy_ between quantized tensors of ",
                "dtypes ", src.scalar_type(), " and ", dst.scalar_type(), " is not supported");
    at::set_quantizer_(dst,
                       src.quantizer());  // as on the CPU: dst takes src's scale and zero point
  } else {
    // A float source is quantized with dst's parameters, where it lives.
    src = at::quantize_per_tensor(self, dst.q_scale(), dst.q_zero_point(), dst.scalar_type());
  }
  // The integers move as dense tensors, through openreg's dense copies.
  integer_alias(dst).copy_(integer_alias(src), non_blocking);
  return dst;
}

at::Tensor quantized_copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  TORCH_CHECK(self.sizes() == dst.sizes(), "resizing quantized tensors on openreg is not ",
              "supported (from ", dst.sizes(), " to ", self.sizes(), ")");
  return quantized_copy_from(self, dst, false);
}

// PyTorch's _to_copy makes the copy of a quantized tensor that is not dense
// (a slice with a step) with empty_like, which keeps the source's device:
// `.cpu()` would return an openreg tensor. Such a tensor is made contiguous on
// its own device first, where PyTorch's path for dense tensors takes over.
at::Tensor quantized_to_copy(const at::Tensor& self, std::optional<c10::ScalarType> dtype,
                             std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                             std::optional<bool> pin_memory, bool non_blocking,
                             std::optional<c10::MemoryFormat> memory_format) {
  bool moves = device.has_value() && device->type() != self.device().type();
  const at::Tensor& src = moves && !self.is_non_overlapping_and_dense() ? self.contiguous() : self;
  return at::native::_to_copy(src, dtype, layout, device, pin_memory, non_blocking, memory_format);
}
// LITERALINCLUDE END: QUANTIZED_COPY

// LITERALINCLUDE START: QUANTIZED_FALLBACK_KERNEL
void quantized_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  run_on_cpu(op, stack, c10::DispatchKey::QuantizedCPU);
}

void per_channel_not_supported(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "'", display_name(op.schema()), "' is not supported on ",
                              "openreg: openreg implements per-tensor affine quantization ",
                              "(torch.per_tensor_affine) only. Keep per-channel quantized tensors ",
                              "on the CPU.");
}
// LITERALINCLUDE END: QUANTIZED_FALLBACK_KERNEL

}  // namespace at::native::openreg

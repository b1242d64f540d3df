// Minimal.h: kernels of the minimal operator set, the ops every backend must provide.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/core/Storage.h>

#include <optional>
#include <vector>

namespace at::native::openreg {

// What kernels use for their outputs: no second trip through the dispatcher
// (CUDA's kernels call at::detail::empty_cuda the same way).
at::Tensor empty_openreg(c10::IntArrayRef size, c10::ScalarType dtype, c10::Device device);
// The strides PyTorch's CPU kernels give an elementwise result of shape
// `size` of the operands `like` and `other` (if given); none for contiguous.
std::optional<std::vector<int64_t>> result_strides(const at::Tensor& like, c10::IntArrayRef size,
                                                   const at::Tensor& other = at::Tensor());
// A result laid out so (result_strides).
at::Tensor empty_openreg_like(const at::Tensor& like, c10::IntArrayRef size, c10::ScalarType dtype,
                              c10::Device device, const at::Tensor& other = at::Tensor());

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory,
                               std::optional<c10::MemoryFormat> memory_format);
at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                         std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                         std::optional<c10::Device> device, std::optional<bool> pin_memory);
at::Tensor as_strided(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride,
                      std::optional<int64_t> storage_offset);
const at::Tensor& resize_(const at::Tensor& self, c10::IntArrayRef size,
                          std::optional<c10::MemoryFormat> memory_format);
at::Tensor _reshape_alias(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride);
at::Tensor _copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking);
at::Tensor _copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst);
c10::Scalar _local_scalar_dense(const at::Tensor& self);
at::Tensor& set_source_Tensor(at::Tensor& self, const at::Tensor& source);
at::Tensor& set_source_Storage(at::Tensor& self, c10::Storage source);
at::Tensor& set_source_Storage_storage_offset(at::Tensor& self, c10::Storage source,
                                              int64_t storage_offset, c10::IntArrayRef size,
                                              c10::IntArrayRef stride);
at::Tensor view(const at::Tensor& self, c10::IntArrayRef size);
bool _has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from);

}  // namespace at::native::openreg

// OpenRegBackendMeta.h: a private per-tensor attribute (the device's internal format), kept in BackendMeta.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/TensorImpl.h>

#include <string>

namespace c10::openreg {

// LITERALINCLUDE START: SERIALIZATION_BACKEND_META_TYPE
// How a vendor's kernels would lay the tensor out internally. PyTorch never
// looks at it; the backend keeps it next to the tensor and in checkpoints.
enum class InternalFormat : int8_t { Plain = 0, Tiled = 1, Blocked = 2 };

struct OpenRegTensorMeta final : c10::BackendMeta {
  explicit OpenRegTensorMeta(InternalFormat f) : format(f) {}
  InternalFormat format;

  // Called whenever PyTorch copies a TensorImpl's metadata (detach(), .data,
  // nn.Parameter(t), ...): the copy gets its own attribute, not a shared one.
  c10::intrusive_ptr<c10::BackendMeta> clone(
      const c10::intrusive_ptr<c10::BackendMeta>& /*self*/) const override {
    return c10::make_intrusive<OpenRegTensorMeta>(format);
  }
};
// LITERALINCLUDE END: SERIALIZATION_BACKEND_META_TYPE

InternalFormat internal_format(const at::Tensor& tensor);
void set_internal_format(const at::Tensor& tensor, InternalFormat format);
std::string format_name(InternalFormat format);
InternalFormat parse_format(const std::string& name);

}  // namespace c10::openreg

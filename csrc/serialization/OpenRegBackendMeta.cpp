// OpenRegBackendMeta.cpp: reading, writing and serializing the internal-format attribute.
#include "OpenRegBackendMeta.h"

#include <torch/csrc/jit/serialization/pickler_helper.h>

#include <cstring>

namespace c10::openreg {

namespace {
constexpr const char* kKeyPrefix = "openreg_format_";

void check_openreg(const at::Tensor& tensor, const char* what) {
  TORCH_CHECK(tensor.device().type() == DeviceType::PrivateUse1, what,
              ": the internal format is an attribute of openreg tensors, got a tensor on ",
              tensor.device());
}
}  // namespace

// LITERALINCLUDE START: SERIALIZATION_FORMAT_ACCESS
InternalFormat internal_format(const at::Tensor& tensor) {
  check_openreg(tensor, "internal_format");
  auto* meta = dynamic_cast<OpenRegTensorMeta*>(tensor.unsafeGetTensorImpl()->get_backend_meta());
  return meta != nullptr ? meta->format : InternalFormat::Plain;
}

void set_internal_format(const at::Tensor& tensor, InternalFormat format) {
  check_openreg(tensor, "set_internal_format");
  tensor.unsafeGetTensorImpl()->set_backend_meta(c10::make_intrusive<OpenRegTensorMeta>(format));
}
// LITERALINCLUDE END: SERIALIZATION_FORMAT_ACCESS

std::string format_name(InternalFormat format) {
  switch (format) {
    case InternalFormat::Plain: return "plain";
    case InternalFormat::Tiled: return "tiled";
    case InternalFormat::Blocked: return "blocked";
  }
  TORCH_CHECK(false, "unknown openreg internal format ", static_cast<int>(format));
}

InternalFormat parse_format(const std::string& name) {
  for (auto f : {InternalFormat::Plain, InternalFormat::Tiled, InternalFormat::Blocked}) {
    if (format_name(f) == name) return f;
  }
  TORCH_CHECK_VALUE(false, "unknown openreg internal format '", name,
                    "' (expected plain, tiled or blocked)");
}

// LITERALINCLUDE START: SERIALIZATION_BACKEND_META_REGISTRY
namespace {
// Serialization keeps tensor metadata as {string: bool}: a non-default format
// is written as one key, "openreg_format_<name>": true. A plain tensor adds
// nothing, so its checkpoint is the same as any backend's.
void write_meta(const at::Tensor& tensor, std::unordered_map<std::string, bool>& metadata) {
  InternalFormat format = internal_format(tensor);
  if (format != InternalFormat::Plain) metadata[kKeyPrefix + format_name(format)] = true;
}

// Consumes the keys it owns; an unknown format name in a checkpoint is an error.
void read_meta(const at::Tensor& tensor, std::unordered_map<std::string, bool>& metadata) {
  for (auto it = metadata.begin(); it != metadata.end();) {
    if (it->first.rfind(kKeyPrefix, 0) == 0) {
      if (it->second)
        set_internal_format(tensor, parse_format(it->first.substr(strlen(kKeyPrefix))));
      it = metadata.erase(it);
    } else {
      ++it;
    }
  }
}

// Registered when libtorch_openreg loads; torch.save/torch.load, and
// torch._utils.get_tensor_metadata/set_tensor_metadata, call these for every
// openreg tensor.
const bool meta_registered = [] {
  torch::jit::TensorBackendMetaRegistry(DeviceType::PrivateUse1, &write_meta, &read_meta);
  return true;
}();
}  // namespace
// LITERALINCLUDE END: SERIALIZATION_BACKEND_META_REGISTRY

}  // namespace c10::openreg

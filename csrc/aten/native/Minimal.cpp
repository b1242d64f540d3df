// Minimal.cpp: tensor creation, views, resizing and storage plumbing for openreg.
// LITERALINCLUDE START: MINIMAL_MINIMAL_INCLUDES
#include "Minimal.h"

#include <ATen/EmptyTensor.h>
#include <ATen/ExpandUtils.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/ResizeCommon.h>
#include <ATen/native/TensorFactories.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>

#include "../../runtime/OpenRegDeviceAllocator.h"
#include "../../runtime/OpenRegException.h"
#include "../../runtime/OpenRegHooks.h"
#include "../../runtime/OpenRegStream.h"
// LITERALINCLUDE END: MINIMAL_MINIMAL_INCLUDES

namespace at::native::openreg {

namespace {
// LITERALINCLUDE START: MINIMAL_K_OPEN_REG_KEYS
constexpr c10::DispatchKeySet kOpenRegKeys{c10::DispatchKey::PrivateUse1};
// LITERALINCLUDE END: MINIMAL_K_OPEN_REG_KEYS

// LITERALINCLUDE START: MINIMAL_CHECK_FACTORY_OPTIONS
void check_factory_options(std::optional<c10::Layout> layout, std::optional<bool> pin_memory) {
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided,
              "openreg supports only strided tensors, got layout ", c10::layout_or_default(layout));
  TORCH_CHECK(!c10::pinned_memory_or_default(pin_memory),
              "only CPU tensors can be pinned, not openreg tensors");
}
// LITERALINCLUDE END: MINIMAL_CHECK_FACTORY_OPTIONS

// LITERALINCLUDE START: MINIMAL_ENSURE_STORAGE_FITS
// Grows the storage when the tensor's new geometry needs more bytes.
void ensure_storage_fits(const at::Tensor& self) {
  auto* impl = self.unsafeGetTensorImpl();
  size_t needed = at::detail::computeStorageNbytes(
      impl->sizes(), impl->strides(), impl->dtype().itemsize(), impl->storage_offset());
  if (needed > impl->storage().nbytes()) {
    c10::openreg::resize_storage_bytes(impl->storage(), needed);
  }
}
// LITERALINCLUDE END: MINIMAL_ENSURE_STORAGE_FITS

// LITERALINCLUDE START: MINIMAL_DETERMINISTIC_FILL
// Under torch.use_deterministic_algorithms(True), memory a program gets
// without writing it (torch.empty, a resize that grows) is filled with NaN,
// or an integer type's largest value, so that reading it by mistake gives
// the same wrong answer on every run. PyTorch's CPU and CUDA factories do
// it; a backend's factories must too.
bool deterministic_fill() {
  const auto& context = at::globalContext();
  return context.deterministicAlgorithms() && context.deterministicFillUninitializedMemory();
}
// LITERALINCLUDE END: MINIMAL_DETERMINISTIC_FILL
}  // namespace

// LITERALINCLUDE START: MINIMAL_EMPTY_MEMORY_FORMAT
at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory,
                               std::optional<c10::MemoryFormat> memory_format) {
  check_factory_options(layout, pin_memory);
  // The guard validates the index ("openreg:99" raises) and makes the
  // allocator work on the requested device.
  c10::DeviceGuard guard(c10::device_or_default(device));
  at::Tensor t = at::detail::empty_generic(size, c10::openreg::device_allocator(), kOpenRegKeys,
                                           c10::dtype_or_default(dtype), memory_format);
  if (C10_UNLIKELY(deterministic_fill())) at::native::fill_empty_deterministic_(t);
  return t;
}
// LITERALINCLUDE END: MINIMAL_EMPTY_MEMORY_FORMAT

// A contiguous device tensor, for the hand-written kernels' results.
at::Tensor empty_openreg(c10::IntArrayRef size, c10::ScalarType dtype, c10::Device device) {
  c10::DeviceGuard guard(device);
  return at::detail::empty_generic(size, c10::openreg::device_allocator(), kOpenRegKeys, dtype,
                                   std::nullopt);
}

// LITERALINCLUDE START: MINIMAL_RESULT_LAYOUT
// The layout PyTorch's CPU kernels (TensorIterator) give the elementwise
// result of shape `size` of the operands `like` and `other` (optional):
// contiguous when they are contiguous and of that shape, else what
// TensorIterator computes from all their strides (a channels_last input gives
// a channels_last result, a slice the same order of dimensions made dense),
// ties between dimensions and the strides of size-1 dimensions broken its
// way. Rather than restate that rule, ask it: a TensorIterator built over
// Meta tensors of the same layout allocates the result as the CPU kernel
// would, and holds no memory and computes nothing.
std::optional<std::vector<int64_t>> result_strides(const at::Tensor& like, c10::IntArrayRef size,
                                                   const at::Tensor& other) {
  // TensorIterator's shortcut: operands all contiguous and of the result's shape.
  auto plain = [&](const at::Tensor& t) { return t.is_contiguous() && t.sizes() == size; };
  if (plain(like) && (!other.defined() || plain(other))) return std::nullopt;
  auto meta = [](const at::Tensor& t) {  // one dtype for both: only the strides matter
    return at::empty_strided(t.sizes(), t.strides(),
                             at::TensorOptions().dtype(at::kByte).device(c10::kMeta));
  };
  at::TensorIteratorConfig config;
  config.add_owned_output(at::Tensor()).add_owned_const_input(meta(like));
  if (other.defined()) config.add_owned_const_input(meta(other));
  at::TensorIterator iter = config.check_all_same_dtype(false).build();
  if (iter.output().sizes() != size) return std::nullopt;
  return iter.output().strides().vec();
}

at::Tensor empty_openreg_like(const at::Tensor& like, c10::IntArrayRef size, c10::ScalarType dtype,
                              c10::Device device, const at::Tensor& other) {
  auto strides = result_strides(like, size, other);
  if (!strides) return empty_openreg(size, dtype, device);
  c10::DeviceGuard guard(device);
  return at::detail::empty_strided_generic(size, *strides, c10::openreg::device_allocator(),
                                           kOpenRegKeys, dtype);
}
// LITERALINCLUDE END: MINIMAL_RESULT_LAYOUT

// LITERALINCLUDE START: MINIMAL_EMPTY_STRIDED
at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                         std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                         std::optional<c10::Device> device, std::optional<bool> pin_memory) {
  check_factory_options(layout, pin_memory);
  c10::DeviceGuard guard(c10::device_or_default(device));
  at::Tensor t = at::detail::empty_strided_generic(size, stride, c10::openreg::device_allocator(),
                                                   kOpenRegKeys, c10::dtype_or_default(dtype));
  if (C10_UNLIKELY(deterministic_fill())) at::native::fill_empty_deterministic_(t);
  return t;
}
// LITERALINCLUDE END: MINIMAL_EMPTY_STRIDED

// LITERALINCLUDE START: MINIMAL_VIEWS
at::Tensor as_strided(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride,
                      std::optional<int64_t> storage_offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

at::Tensor view(const at::Tensor& self, c10::IntArrayRef size) {
  return at::native::view(self, size);
}

at::Tensor _reshape_alias(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride) {
  return at::native::_reshape_alias(self, size, stride);
}
// LITERALINCLUDE END: MINIMAL_VIEWS

// LITERALINCLUDE START: MINIMAL_RESIZE
const at::Tensor& resize_(const at::Tensor& self, c10::IntArrayRef size,
                          std::optional<c10::MemoryFormat> memory_format) {
  auto* impl = self.unsafeGetTensorImpl();
  if (impl->sizes() == size && !memory_format.has_value()) return self;  // strides kept, as ATen
  impl->set_sizes_contiguous(size);
  if (memory_format.has_value() && *memory_format != c10::MemoryFormat::Preserve) {
    impl->empty_tensor_restride(*memory_format);
  }
  // CPU's resize would reallocate with the CPU allocator; device storage is
  // regrown through the openreg allocator, contents copied on the device.
  int64_t old_bytes = static_cast<int64_t>(impl->storage().nbytes());
  ensure_storage_fits(self);
  if (C10_UNLIKELY(deterministic_fill())) at::native::fill_resize_deterministic_(self, old_bytes);
  return self;
}
// LITERALINCLUDE END: MINIMAL_RESIZE

// LITERALINCLUDE START: MINIMAL_SET
at::Tensor& set_source_Storage_storage_offset(at::Tensor& self, c10::Storage source,
                                              int64_t storage_offset, c10::IntArrayRef size,
                                              c10::IntArrayRef stride) {
  TORCH_CHECK(source.device() == self.device() || source.nbytes() == 0,
              "set_: expected a storage on ", self.device(), " but got one on ", source.device());
  TORCH_CHECK(storage_offset >= 0, "set_: storage offset must be non-negative, got ",
              storage_offset);
  auto* impl = self.unsafeGetTensorImpl();
  if (!impl->storage().is_alias_of(source)) impl->set_storage_keep_dtype(std::move(source));
  impl->set_storage_offset(storage_offset);
  if (stride.empty()) {
    impl->set_sizes_contiguous(size);
  } else {
    impl->set_sizes_and_strides(size, stride);
  }
  ensure_storage_fits(self);
  return self;
}

at::Tensor& set_source_Storage(at::Tensor& self, c10::Storage source) {
  int64_t numel = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  return set_source_Storage_storage_offset(self, std::move(source), 0, {numel}, {});
}

at::Tensor& set_source_Tensor(at::Tensor& self, const at::Tensor& source) {
  if (self.is_same(source)) return self;
  return set_source_Storage_storage_offset(self, source.storage(), source.storage_offset(),
                                           source.sizes(), source.strides());
}
// LITERALINCLUDE END: MINIMAL_SET

// LITERALINCLUDE START: MINIMAL_SHALLOW_COPY
// Whether `self` may take `from`'s storage and metadata in place, as
// `param.data = new` does. `Module.to` asks it to move a Parameter without
// replacing it: when the answer is no, every Parameter becomes a new object,
// so tied weights come apart and an optimizer built before `.to()` keeps the
// old ones. c10's answer lists the dense backends it knows, and PrivateUse1 is
// not among them: a plain strided openreg tensor is exactly as compatible
// with a strided CPU tensor as a CUDA tensor is.
bool _has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  auto plain = [](const at::Tensor& t) {
    return t.layout() == c10::kStrided && !t.is_quantized() && !t.is_nested() &&
           (t.is_cpu() || t.is_privateuseone());
  };
  if (plain(self) && plain(from)) return true;
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set());
}
// LITERALINCLUDE END: MINIMAL_SHALLOW_COPY

// LITERALINCLUDE START: MINIMAL_LOCAL_SCALAR_DENSE
c10::Scalar _local_scalar_dense(const at::Tensor& self) {
  c10::DeviceGuard guard(self.device());
  at::Tensor host = at::empty({}, self.options().device(c10::kCPU));
  orStream_t stream = c10::openreg::getCurrentOpenRegStream().stream();
  OPENREG_CHECK(orMemcpyAsync(host.mutable_data_ptr(), self.const_data_ptr(), self.element_size(),
                              orMemcpyDeviceToHost, stream));
  OPENREG_CHECK(orStreamSynchronize(stream));  // also reports earlier kernel failures
  return host.item();
}
// LITERALINCLUDE END: MINIMAL_LOCAL_SCALAR_DENSE

}  // namespace at::native::openreg

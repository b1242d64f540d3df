// minireg.cpp: the smallest PrivateUse1 backend that works, in one translation unit.
// Device memory is plain host memory (malloc); there is one device and one stream.
// LITERALINCLUDE START: MINIMAL_BACKEND_INCLUDES
#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/view_native.h>
#include <c10/core/Allocator.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>
// LITERALINCLUDE END: MINIMAL_BACKEND_INCLUDES

// LITERALINCLUDE START: MINIMAL_BACKEND_CONSTANTS
namespace minireg {
constexpr c10::DeviceType kDevice = c10::DeviceType::PrivateUse1;
constexpr c10::DispatchKeySet kKeys{c10::DispatchKey::PrivateUse1};
constexpr c10::DeviceIndex kDeviceCount = 1;
thread_local c10::DeviceIndex current_device = 0;  // what the guard sets
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_CONSTANTS

// LITERALINCLUDE START: MINIMAL_BACKEND_ALLOCATOR
namespace minireg {
void free_device_memory(void* ptr) { std::free(ptr); }

struct MiniAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    void* ptr = nbytes ? std::malloc(nbytes) : nullptr;
    TORCH_CHECK(ptr || nbytes == 0, "minireg: out of memory allocating ", nbytes, " bytes");
    return {ptr, ptr, &free_device_memory, c10::Device(kDevice, current_device)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &free_device_memory; }
  // Pure virtual: clone() of a storage and resizing use it. Device-to-device here.
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
};

MiniAllocator allocator;
REGISTER_ALLOCATOR(kDevice, &allocator);
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_ALLOCATOR

// LITERALINCLUDE START: MINIMAL_BACKEND_GUARD
namespace minireg {
struct MiniGuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kDevice; }
  c10::Device exchangeDevice(c10::Device device) const override {
    c10::Device old = getDevice();
    setDevice(device);
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(kDevice, current_device); }
  void setDevice(c10::Device device) const override {
    TORCH_CHECK(device.index() >= 0 && device.index() < kDeviceCount,
                "minireg: invalid device index ", static_cast<int>(device.index()), " (there are ",
                static_cast<int>(kDeviceCount), " devices)");
    current_device = device.index();
  }
  void uncheckedSetDevice(c10::Device device) const noexcept override {
    current_device = device.index();
  }
  c10::Stream getStream(c10::Device device) const override {
    return c10::Stream(c10::Stream::DEFAULT, device);  // one stream: the default one
  }
  c10::Stream exchangeStream(c10::Stream stream) const override { return stream; }
  c10::DeviceIndex deviceCount() const noexcept override { return kDeviceCount; }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, MiniGuardImpl);
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_GUARD

// LITERALINCLUDE START: MINIMAL_BACKEND_HOOKS
namespace minireg {
struct MiniHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
};

const bool hooks_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new MiniHooks());  // lives as long as the process
  return true;
}();
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_HOOKS

// LITERALINCLUDE START: MINIMAL_BACKEND_EMPTY
namespace minireg {
void check_factory_options(std::optional<c10::Layout> layout, std::optional<bool> pin_memory) {
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided,
              "minireg supports only strided tensors");
  TORCH_CHECK(!c10::pinned_memory_or_default(pin_memory), "minireg tensors cannot be pinned");
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory,
                               std::optional<c10::MemoryFormat> memory_format) {
  check_factory_options(layout, pin_memory);
  c10::DeviceGuard guard(c10::device_or_default(device));  // validates the index
  return at::detail::empty_generic(size, &allocator, kKeys, c10::dtype_or_default(dtype),
                                   memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                         std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                         std::optional<c10::Device> device, std::optional<bool> pin_memory) {
  check_factory_options(layout, pin_memory);
  c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_strided_generic(size, stride, &allocator, kKeys,
                                           c10::dtype_or_default(dtype));
}
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_EMPTY

// LITERALINCLUDE START: MINIMAL_BACKEND_VIEWS
namespace minireg {
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
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_VIEWS

// LITERALINCLUDE START: MINIMAL_BACKEND_RESIZE
namespace minireg {
const at::Tensor& resize_(const at::Tensor& self, c10::IntArrayRef size,
                          std::optional<c10::MemoryFormat> memory_format) {
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(size);
  if (memory_format.has_value() && *memory_format != c10::MemoryFormat::Preserve) {
    impl->empty_tensor_restride(*memory_format);
  }
  size_t needed = at::detail::computeStorageNbytes(
      impl->sizes(), impl->strides(), impl->dtype().itemsize(), impl->storage_offset());
  c10::Storage storage = impl->storage();
  if (needed > storage.nbytes()) {
    TORCH_CHECK(storage.resizable(), "minireg: the storage of this tensor cannot be resized");
    c10::DataPtr grown = allocator.allocate(needed);
    if (storage.nbytes() > 0) allocator.copy_data(grown.get(), storage.data(), storage.nbytes());
    storage.set_data_ptr_noswap(std::move(grown));
    storage.set_nbytes(needed);
  }
  return self;
}
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_RESIZE

// LITERALINCLUDE START: MINIMAL_BACKEND_COPY
namespace minireg {
// Device memory is host memory here, so a device tensor has a CPU alias over the
// same bytes and every copy (host<->device, device<->device) is a CPU copy_ between
// aliases: it handles strides, broadcasting and dtype conversion. A driver whose
// memory the host cannot address copies through its own memcpy instead
// (openreg's Copy.cpp, shown in the production section).
at::Tensor host_alias(const at::Tensor& tensor) {
  if (tensor.is_cpu()) return tensor;
  TORCH_CHECK(tensor.device().type() == kDevice, "minireg cannot copy to or from ",
              tensor.device());
  return at::from_blob(tensor.data_ptr(), tensor.sizes(), tensor.strides(),
                       tensor.options().device(c10::kCPU));
}

at::Tensor _copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  host_alias(dst).copy_(host_alias(self));  // synchronous: non_blocking changes nothing
  return dst;
}

at::Tensor _copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return _copy_from(self, dst, false);
}
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_COPY

// LITERALINCLUDE START: MINIMAL_BACKEND_REGISTER
namespace minireg {
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", TORCH_FN(empty_memory_format));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("as_strided", TORCH_FN(as_strided));
  m.impl("view", TORCH_FN(view));
  m.impl("_reshape_alias", TORCH_FN(_reshape_alias));
  m.impl("resize_", TORCH_FN(resize_));
  m.impl("_copy_from", TORCH_FN(_copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(_copy_from_and_resize));
}
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_REGISTER

// LITERALINCLUDE START: MINIMAL_BACKEND_FALLBACK
namespace minireg {
// Every other operator: move the arguments to CPU, run the CPU kernel, move results back.
void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  at::native::cpu_fallback(op, stack);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_FALLBACK

// LITERALINCLUDE START: MINIMAL_BACKEND_C_API
// Plain C functions for the Python device module (ctypes): no pybind11 needed.
extern "C" int minireg_device_count() { return minireg::kDeviceCount; }

extern "C" int minireg_current_device() { return minireg::current_device; }
// LITERALINCLUDE END: MINIMAL_BACKEND_C_API

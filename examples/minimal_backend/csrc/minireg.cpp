// minireg.cpp: the smallest PrivateUse1 backend that trains a model, in one translation
// unit over its own driver (driver.h). Each listing carries its own includes, so it
// compiles pasted in order below the ones before it.

// LITERALINCLUDE START: MINIMAL_BACKEND_CONSTANTS
#include <c10/core/Device.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/util/Exception.h>

#include "driver.h"

namespace minireg {
constexpr c10::DeviceType kDevice = c10::DeviceType::PrivateUse1;
constexpr c10::DispatchKeySet kKeys{c10::DispatchKey::PrivateUse1};
thread_local c10::DeviceIndex current_device = 0;  // what the guard sets, per thread
thread_local mdStream current_stream = nullptr;    // the same for the current stream

c10::DeviceIndex device_count() { return static_cast<c10::DeviceIndex>(mdDeviceCount()); }
}  // namespace minireg

// Every driver call is checked: a failure becomes a Python RuntimeError naming the call.
#define MINIREG_CHECK(call)                                     \
  do {                                                          \
    mdError minireg_error = (call);                             \
    TORCH_CHECK(minireg_error == mdSuccess, "minireg: ", #call, \
                " failed: ", mdGetErrorString(minireg_error));  \
  } while (false)
// LITERALINCLUDE END: MINIMAL_BACKEND_CONSTANTS

// LITERALINCLUDE START: MINIMAL_BACKEND_ALLOCATOR
#include <c10/core/Allocator.h>

namespace minireg {
void free_device_memory(void* ptr) {
  // A deleter cannot throw; mdFree fails only for an address it did not hand out.
  mdError error = mdFree(ptr);
  TORCH_INTERNAL_ASSERT(error == mdSuccess, "minireg: mdFree: ", mdGetErrorString(error));
}

struct MiniAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    void* ptr = nullptr;
    MINIREG_CHECK(mdMalloc(&ptr, nbytes));
    return {ptr, ptr, &free_device_memory, c10::Device(kDevice, current_device)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &free_device_memory; }
  // Pure virtual: clone() of a storage and resizing use it. Both pointers are device memory.
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    MINIREG_CHECK(mdMemcpy(dest, src, count, mdDeviceToDevice));
  }
};

MiniAllocator allocator;
REGISTER_ALLOCATOR(kDevice, &allocator);
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_ALLOCATOR

// LITERALINCLUDE START: MINIMAL_BACKEND_GUARD
#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <array>
#include <atomic>

namespace minireg {
// A c10::Stream carries a 64-bit id: here the driver's stream handle (0: the default stream).
// torch.Stream(device="minireg") asks for a stream on a device without an index: the current one.
c10::Stream to_stream(mdStream stream, c10::Device device) {
  c10::DeviceIndex index = device.has_index() ? device.index() : current_device;
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kDevice, index),
                     static_cast<c10::StreamId>(reinterpret_cast<intptr_t>(stream)));
}
mdStream to_driver(const c10::Stream& stream) {
  return reinterpret_cast<mdStream>(static_cast<intptr_t>(stream.id()));
}

struct MiniGuardImpl final : c10::impl::DeviceGuardImplInterface {
  // The eight pure virtual methods.
  c10::DeviceType type() const override { return kDevice; }
  c10::Device exchangeDevice(c10::Device device) const override {
    c10::Device old = getDevice();
    setDevice(device);
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(kDevice, current_device); }
  void setDevice(c10::Device device) const override {
    TORCH_CHECK(device.index() >= 0 && device.index() < device_count(),
                "minireg: invalid device index ", static_cast<int>(device.index()), " (there are ",
                static_cast<int>(device_count()), " devices)");
    current_device = device.index();
  }
  void uncheckedSetDevice(c10::Device device) const noexcept override {
    current_device = device.index();
  }
  c10::Stream getStream(c10::Device device) const override {
    return to_stream(current_stream, device);
  }
  c10::Stream exchangeStream(c10::Stream stream) const override {
    c10::Stream old = getStream(stream.device());
    current_stream = to_driver(stream);
    return old;
  }
  c10::DeviceIndex deviceCount() const noexcept override { return device_count(); }

  // Streams: torch.Stream(device=...), stream pools, stream.query() and .synchronize().
  c10::Stream getDefaultStream(c10::Device device) const override {
    return to_stream(nullptr, device);
  }
  c10::Stream getNewStream(c10::Device device, int /*priority*/) const override {
    mdStream stream = nullptr;
    MINIREG_CHECK(mdStreamCreate(&stream));
    return to_stream(stream, device);
  }
  c10::Stream getStreamFromGlobalPool(c10::Device device, bool /*high_priority*/) const override {
    static const std::array<mdStream, 4> pool = [] {
      std::array<mdStream, 4> streams{};
      for (mdStream& stream : streams) MINIREG_CHECK(mdStreamCreate(&stream));
      return streams;
    }();
    static std::atomic<size_t> next{0};
    return to_stream(pool[next++ % pool.size()], device);
  }
  bool queryStream(const c10::Stream& stream) const override {
    return mdStreamQuery(to_driver(stream)) == mdSuccess;
  }
  void synchronizeStream(const c10::Stream& stream) const override {
    MINIREG_CHECK(mdStreamSynchronize(to_driver(stream)));
  }
  void synchronizeDevice(c10::DeviceIndex /*device_index*/) const override {
    MINIREG_CHECK(mdDeviceSynchronize());
  }

  // Events: torch.Event, stream.wait_event(), event.elapsed_time(). PyTorch creates an
  // event lazily: the first record() receives a null handle and stores the new one.
  void record(void** event, const c10::Stream& stream, c10::DeviceIndex device_index,
              c10::EventFlag /*flag*/) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(),
                "minireg: an event recorded on device ", static_cast<int>(device_index),
                " must stay there (the stream is on device ",
                static_cast<int>(stream.device_index()), ")");
    if (*event == nullptr) MINIREG_CHECK(mdEventCreate(reinterpret_cast<mdEvent*>(event)));
    MINIREG_CHECK(mdEventRecord(static_cast<mdEvent>(*event), to_driver(stream)));
  }
  void block(void* event, const c10::Stream& stream) const override {
    if (event == nullptr) return;  // never recorded: nothing to wait for
    MINIREG_CHECK(mdStreamWaitEvent(to_driver(stream), static_cast<mdEvent>(event)));
  }
  bool queryEvent(void* event) const override {
    return event == nullptr || mdEventQuery(static_cast<mdEvent>(event)) == mdSuccess;
  }
  void synchronizeEvent(void* event) const override {
    if (event != nullptr) MINIREG_CHECK(mdEventSynchronize(static_cast<mdEvent>(event)));
  }
  double elapsedTime(void* start, void* end, c10::DeviceIndex /*device_index*/) const override {
    TORCH_CHECK(start != nullptr && end != nullptr,
                "minireg: both events must be recorded before elapsed_time");
    float ms = 0;
    MINIREG_CHECK(mdEventElapsedTime(&ms, static_cast<mdEvent>(start), static_cast<mdEvent>(end)));
    return ms;
  }
  void destroyEvent(void* event, c10::DeviceIndex /*device_index*/) const noexcept override {
    if (event != nullptr) mdEventDestroy(static_cast<mdEvent>(event));
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, MiniGuardImpl);
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_GUARD

// LITERALINCLUDE START: MINIMAL_BACKEND_EMPTY
#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <c10/core/DeviceGuard.h>

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
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>

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
#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>

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

// LITERALINCLUDE START: MINIMAL_BACKEND_LAUNCH
#include <ATen/TensorIterator.h>

#include <array>
#include <type_traits>

namespace minireg {
// Launches any C++ callable as a kernel on the current stream. The driver takes a C
// function and a pointer; minidrv runs the kernel before mdLaunch returns, so the
// callable may live on this stack (an asynchronous driver needs a copy).
template <typename Kernel>
void launch(Kernel&& kernel) {
  using K = std::remove_reference_t<Kernel>;
  MINIREG_CHECK(mdLaunch(current_stream, [](void* k) { (*static_cast<K*>(k))(); }, &kernel));
}

// An elementwise kernel: calls body(pointers) once per element, with one pointer per
// operand of the TensorIterator (outputs first). The iterator supplies broadcasting,
// strides and output allocation; the kernel reads and writes only device views.
template <typename Body>
void for_each_element(const at::TensorIteratorBase& iter, Body body) {
  if (iter.numel() == 0) return;
  const int n = iter.ntensors();
  TORCH_INTERNAL_ASSERT(n <= 3);
  launch([&] {
    iter.serial_for_each(
        [&](char** data, const int64_t* strides, int64_t size0, int64_t size1) {
          std::array<char*, 3> base{};
          for (int k = 0; k < n; ++k) base[k] = static_cast<char*>(mdDeviceView(data[k]));
          for (int64_t j = 0; j < size1; ++j) {
            for (int64_t i = 0; i < size0; ++i) {
              std::array<char*, 3> at{};
              for (int k = 0; k < n; ++k) at[k] = base[k] + i * strides[k] + j * strides[n + k];
              body(at.data());
            }
          }
        },
        {0, iter.numel()});
  });
}
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_LAUNCH

// LITERALINCLUDE START: MINIMAL_BACKEND_COPY
#include <ATen/ops/empty.h>

#include <cstring>

namespace minireg {
// Same dtype, device to device, any strides, src broadcast to dst: a byte copy per element.
void copy_on_device(const at::Tensor& dst, const at::Tensor& src) {
  auto iter = at::TensorIteratorConfig().add_output(dst).add_const_input(src).build();
  const size_t itemsize = dst.element_size();
  for_each_element(iter, [itemsize](char** at) { std::memcpy(at[0], at[1], itemsize); });
}

// Device memory is not host memory, so every copy that crosses goes through the driver
// with a contiguous buffer on each side; strides, broadcasting and dtype conversion are
// done where they are cheap: on the CPU (PyTorch's copy_) or by the device kernel above.
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking*/) {
  TORCH_CHECK(self.device().type() == kDevice || dst.device().type() == kDevice,
              "minireg cannot copy from ", self.device(), " to ", dst.device());
  if (dst.numel() == 0) return dst;
  if (self.is_cpu()) {  // host to device
    at::Tensor staged = self.to(dst.scalar_type()).expand(dst.sizes()).contiguous();
    at::Tensor target = dst.is_contiguous() ? dst : at::empty(dst.sizes(), dst.options());
    MINIREG_CHECK(mdMemcpy(target.data_ptr(), staged.data_ptr(), staged.nbytes(), mdHostToDevice));
    if (!target.is_same(dst)) copy_on_device(dst, target);
  } else if (dst.is_cpu()) {  // device to host
    at::Tensor packed = self;
    if (!self.is_contiguous()) {
      packed = at::empty(self.sizes(), self.options());
      copy_on_device(packed, self);
    }
    at::Tensor staged = at::empty(packed.sizes(), packed.options().device(c10::kCPU));
    MINIREG_CHECK(mdMemcpy(staged.data_ptr(), packed.data_ptr(), packed.nbytes(), mdDeviceToHost));
    dst.copy_(staged);
  } else if (self.scalar_type() == dst.scalar_type()) {  // device to device
    copy_on_device(dst, self);
  } else {  // device to device with a dtype conversion: through the host
    dst.copy_(self.cpu());
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_COPY

// LITERALINCLUDE START: MINIMAL_BACKEND_FALLBACK
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

namespace minireg {
// Every operator without a kernel of its own: move the arguments to the CPU, run the CPU
// kernel there, move the results back (through the copies above).
void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  at::native::cpu_fallback(op, stack);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

// mse_loss has CPU and CUDA kernels only. On another device PyTorch runs a generated
// wrapper that allocates a 0-dim result and calls mse_loss.out with it; the fallback runs
// that on the CPU, whose out= check sees the 1-element result sized first as the
// elementwise loss and warns "An output with one or more elements was resized". Sending
// the operator itself to the fallback runs it on the CPU whole, with no out= tensor.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mse_loss", torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_FALLBACK

// LITERALINCLUDE START: MINIMAL_BACKEND_ELEMENTWISE
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Operators.h>
#include <ATen/native/CPUFallback.h>

namespace minireg {
// The operands of a binary kernel: on this device, in the dtype PyTorch's type promotion
// picks (a Python number does not widen a float32 tensor), and a CPU scalar (the `2` of
// `x + 2`) copied to the device. Empty if the device kernels do not cover the case.
std::optional<std::pair<at::Tensor, at::Tensor>> device_operands(const at::Tensor& self,
                                                                 const at::Tensor& other) {
  c10::ScalarType dtype = at::result_type(self, other);
  bool on_device = self.device().type() == kDevice &&
                   (other.device() == self.device() || (other.is_cpu() && other.dim() == 0));
  if (!on_device || !at::isFloatingType(dtype)) return std::nullopt;
  return std::make_pair(self.to(self.device(), dtype), other.to(self.device(), dtype));
}

at::Tensor add(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  auto operands = device_operands(self, other);
  if (!operands) {
    return at::native::call_fallback_fn<&cpu_fallback, ATEN_OP2(add, Tensor)>::call(self, other,
                                                                                    alpha);
  }
  at::Tensor out;
  auto iter = at::TensorIterator::binary_op(out, operands->first, operands->second);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, iter.common_dtype(), "add", [&] {
    const auto a = alpha.to<scalar_t>();
    for_each_element(iter, [a](char** at) {
      *reinterpret_cast<scalar_t*>(at[0]) =
          *reinterpret_cast<scalar_t*>(at[1]) + a * *reinterpret_cast<scalar_t*>(at[2]);
    });
  });
  return iter.output();
}

at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
  auto operands = device_operands(self, other);
  if (!operands) {
    return at::native::call_fallback_fn<&cpu_fallback, ATEN_OP2(mul, Tensor)>::call(self, other);
  }
  at::Tensor out;
  auto iter = at::TensorIterator::binary_op(out, operands->first, operands->second);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, iter.common_dtype(), "mul", [&] {
    for_each_element(iter, [](char** at) {
      *reinterpret_cast<scalar_t*>(at[0]) =
          *reinterpret_cast<scalar_t*>(at[1]) * *reinterpret_cast<scalar_t*>(at[2]);
    });
  });
  return iter.output();
}

at::Tensor relu(const at::Tensor& self) {
  if (!at::isFloatingType(self.scalar_type())) {
    return at::native::call_fallback_fn<&cpu_fallback, ATEN_OP(relu)>::call(self);
  }
  at::Tensor out;
  auto iter = at::TensorIterator::unary_op(out, self);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "relu", [&] {
    for_each_element(iter, [](char** at) {
      scalar_t x = *reinterpret_cast<scalar_t*>(at[1]);
      *reinterpret_cast<scalar_t*>(at[0]) = x < scalar_t(0) ? scalar_t(0) : x;  // NaN stays NaN
    });
  });
  return iter.output();
}
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_ELEMENTWISE

// LITERALINCLUDE START: MINIMAL_BACKEND_MM_SUM
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/empty.h>

#include <vector>

namespace minireg {
at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(self.dim() == 2 && mat2.dim() == 2, "mm: both arguments must be matrices, got ",
              self.dim(), "-D and ", mat2.dim(), "-D");
  TORCH_CHECK(self.size(1) == mat2.size(0), "mm: cannot multiply ", self.sizes(), " by ",
              mat2.sizes());
  if (!at::isFloatingType(self.scalar_type()) || mat2.scalar_type() != self.scalar_type() ||
      mat2.device() != self.device()) {
    return at::native::call_fallback_fn<&cpu_fallback, ATEN_OP(mm)>::call(self, mat2);
  }
  const int64_t n = self.size(0), k = self.size(1), m = mat2.size(1);
  at::Tensor out = at::empty({n, m}, self.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "mm", [&] {
    using acc_t = at::opmath_type<scalar_t>;  // float for half types
    launch([&] {
      const auto* a = static_cast<const scalar_t*>(mdDeviceView(self.data_ptr()));
      const auto* b = static_cast<const scalar_t*>(mdDeviceView(mat2.data_ptr()));
      auto* c = static_cast<scalar_t*>(mdDeviceView(out.data_ptr()));
      const int64_t a0 = self.stride(0), a1 = self.stride(1);
      const int64_t b0 = mat2.stride(0), b1 = mat2.stride(1);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < m; ++j) {
          acc_t sum = 0;
          for (int64_t p = 0; p < k; ++p)
            sum += acc_t(a[i * a0 + p * a1]) * acc_t(b[p * b0 + j * b1]);
          c[i * m + j] = scalar_t(sum);
        }
      }
    });
  });
  return out;
}

// sum over `dim` (all dimensions if none): the kept dimensions first and the summed ones
// last, packed on the device, then one row sum per output element, accumulated in double.
at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<c10::ScalarType> dtype) {
  if (!(self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble) ||
      dtype.value_or(self.scalar_type()) != self.scalar_type()) {
    return at::native::call_fallback_fn<&cpu_fallback, ATEN_OP2(sum, dim_IntList)>::call(
        self, dim, keepdim, dtype);
  }
  auto summed = at::dim_list_to_bitset(dim.value_or(c10::IntArrayRef{}), self.dim());
  if (!dim.has_value() || dim->empty()) summed.set();
  std::vector<int64_t> order, out_sizes, keep_sizes;
  int64_t rows = 1, row_length = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (summed[d]) continue;
    order.push_back(d);
    out_sizes.push_back(self.size(d));
    rows *= self.size(d);
  }
  for (int64_t d = 0; d < self.dim(); ++d) {
    keep_sizes.push_back(summed[d] ? 1 : self.size(d));
    if (!summed[d]) continue;
    order.push_back(d);
    row_length *= self.size(d);
  }
  at::Tensor packed = at::empty({rows, row_length}, self.options());
  copy_on_device(packed.view(self.permute(order).sizes()), self.permute(order));
  at::Tensor out = at::empty(out_sizes, self.options());
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "sum", [&] {
    launch([&] {
      const auto* in = static_cast<const scalar_t*>(mdDeviceView(packed.data_ptr()));
      auto* result = static_cast<scalar_t*>(mdDeviceView(out.data_ptr()));
      for (int64_t r = 0; r < rows; ++r) {
        double total = 0;
        for (int64_t i = 0; i < row_length; ++i) total += in[r * row_length + i];
        result[r] = static_cast<scalar_t>(total);
      }
    });
  });
  return keepdim ? out.view(keep_sizes) : out;
}

at::Tensor sum(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  return sum_dim(self, std::nullopt, false, dtype);
}
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_MM_SUM

// LITERALINCLUDE START: MINIMAL_BACKEND_GENERATOR
#include <ATen/core/Generator.h>
#include <ATen/core/MT19937RNGEngine.h>
#include <c10/core/GeneratorImpl.h>

#include <cstring>
#include <mutex>
#include <vector>

namespace minireg {
// A device's random numbers come from its generator: a seed, an engine, and the state
// torch.Generator.get_state() returns and set_state() restores. The kernels lock
// mutex_ while they draw.
class MiniGenerator final : public c10::GeneratorImpl {
 public:
  explicit MiniGenerator(c10::DeviceIndex index)
      : c10::GeneratorImpl(c10::Device(kDevice, index), c10::DispatchKeySet(kKeys)) {
    set_current_seed(c10::default_rng_seed_val);  // 67280421310721, as every device
  }

  // torch.manual_seed and Generator.manual_seed: restart the sequence from `seed`.
  void set_current_seed(uint64_t seed) override {
    seed_ = seed;
    engine_ = at::mt19937(seed);
  }
  uint64_t current_seed() const override { return seed_; }  // Generator.initial_seed()
  uint64_t seed() override {                                // Generator.seed(): a fresh one
    uint64_t fresh = c10::detail::getNonDeterministicRandom();
    set_current_seed(fresh);
    return fresh;
  }
  // The offset belongs to counter-based generators (Philox); an mt19937 has none, so it is
  // always 0. It must not raise: pickle and copy.deepcopy of any non-CPU generator save
  // get_offset() and restore it with set_offset().
  void set_offset(uint64_t offset) override {
    TORCH_CHECK(offset == 0,
                "minireg: the generator has no offset (it is an mt19937, not "
                "Philox); only 0 can be set, got ",
                offset);
  }
  uint64_t get_offset() const override { return 0; }

  // The state is a CPU byte tensor: the seed, then the engine's words.
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override {
    State state{seed_, engine_.data()};
    at::TensorBase bytes = at::detail::empty_cpu({static_cast<int64_t>(sizeof state)}, at::kByte);
    std::memcpy(bytes.data_ptr(), &state, sizeof state);
    return bytes.getIntrusivePtr();
  }
  void set_state(const c10::TensorImpl& new_state) override {
    TORCH_CHECK(new_state.device().is_cpu() &&
                    new_state.dtype() == caffe2::TypeMeta::Make<uint8_t>() &&
                    new_state.numel() == static_cast<int64_t>(sizeof(State)),
                "minireg: a generator state is a CPU uint8 tensor of ", sizeof(State),
                " bytes, as get_state() returns it");
    State state;
    std::memcpy(&state, new_state.data(), sizeof state);
    seed_ = state.seed;
    engine_.set_data(state.engine);
  }

  uint32_t random() { return engine_(); }  // the kernels' draw; caller holds mutex_
  static c10::DeviceType device_type() { return kDevice; }  // for at::check_generator

 private:
  struct State {
    uint64_t seed;
    at::mt19937_data_pod engine;
  };
  // torch.Generator.clone_state() copies a generator through this.
  MiniGenerator* clone_impl() const override {
    auto* copy = new MiniGenerator(device().index());
    copy->seed_ = seed_;
    copy->engine_ = engine_;
    return copy;
  }

  uint64_t seed_ = 0;
  at::mt19937 engine_;
};

// One default generator per device, made on first use; index -1 is the current device.
const at::Generator& default_generator(c10::DeviceIndex index) {
  static const std::vector<at::Generator> generators = [] {
    std::vector<at::Generator> made;
    for (c10::DeviceIndex i = 0; i < device_count(); ++i) {
      made.push_back(at::make_generator<MiniGenerator>(i));
    }
    return made;
  }();
  if (index == -1) index = current_device;
  TORCH_CHECK(index >= 0 && index < device_count(), "minireg: invalid device index ",
              static_cast<int>(index));
  return generators[index];
}
}  // namespace minireg

// For the device module's manual_seed_all (through ctypes): torch.manual_seed calls it.
extern "C" void minireg_manual_seed_all(uint64_t seed) {
  for (c10::DeviceIndex i = 0; i < minireg::device_count(); ++i) {
    at::Generator generator = minireg::default_generator(i);  // shares the generator
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_current_seed(seed);
  }
}
// LITERALINCLUDE END: MINIMAL_BACKEND_GENERATOR

// LITERALINCLUDE START: MINIMAL_BACKEND_RANDOM
#include <ATen/Dispatch.h>
#include <ATen/core/Generator.h>

#include <cmath>
#include <mutex>

namespace minireg {
// One uniform double in [0, 1) from two 32-bit draws (53 random bits).
double uniform01(MiniGenerator* generator) {
  uint64_t bits = (static_cast<uint64_t>(generator->random()) << 32) | generator->random();
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

template <typename Draw>
void fill_random(at::Tensor self, std::optional<at::Generator> generator, Draw draw) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "minireg: random floats need a floating-point tensor, got ", self.scalar_type());
  auto* gen = at::get_generator_or_default<MiniGenerator>(generator,
                                                          default_generator(self.device().index()));
  std::lock_guard<std::mutex> lock(gen->mutex_);
  auto iter = at::TensorIterator::nullary_op(self);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "random", [&] {
    for_each_element(iter, [&](char** at) {
      *reinterpret_cast<scalar_t*>(at[0]) = static_cast<scalar_t>(draw(gen));
    });
  });
}

at::Tensor& uniform_(at::Tensor& self, double from, double to,
                     std::optional<at::Generator> generator) {
  TORCH_CHECK(from <= to, "uniform_ expects from <= to, got from=", from, " to=", to);
  fill_random(self, generator,
              [=](MiniGenerator* gen) { return from + (to - from) * uniform01(gen); });
  return self;
}

at::Tensor& normal_(at::Tensor& self, double mean, double std,
                    std::optional<at::Generator> generator) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  fill_random(self, generator, [=](MiniGenerator* gen) {  // Box-Muller, one value per pair
    double radius = std::sqrt(-2.0 * std::log(1.0 - uniform01(gen)));
    return mean + std * radius * std::cos(2.0 * M_PI * uniform01(gen));
  });
  return self;
}
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_RANDOM

// LITERALINCLUDE START: MINIMAL_BACKEND_REGISTER
#include <torch/library.h>

namespace minireg {
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // The minimal operators: factories, views, resize_, copies.
  m.impl("empty.memory_format", TORCH_FN(empty_memory_format));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("as_strided", TORCH_FN(as_strided));
  m.impl("view", TORCH_FN(view));
  m.impl("_reshape_alias", TORCH_FN(_reshape_alias));
  m.impl("resize_", TORCH_FN(resize_));
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  // Device kernels.
  m.impl("add.Tensor", TORCH_FN(add));
  m.impl("mul.Tensor", TORCH_FN(mul));
  m.impl("relu", TORCH_FN(relu));
  m.impl("mm", TORCH_FN(mm));
  m.impl("sum", TORCH_FN(sum));
  m.impl("sum.dim_IntList", TORCH_FN(sum_dim));
  m.impl("uniform_", TORCH_FN(uniform_));
  m.impl("normal_", TORCH_FN(normal_));
}
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_REGISTER

// LITERALINCLUDE START: MINIMAL_BACKEND_HOOKS
#include <ATen/detail/PrivateUse1HooksInterface.h>

namespace minireg {
struct MiniHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  // torch.Generator(device="minireg") and the default generator kernels fall back to.
  const at::Generator& getDefaultGenerator(c10::DeviceIndex device_index) const override {
    return default_generator(device_index);
  }
  at::Generator getNewGenerator(c10::DeviceIndex device_index) const override {
    return at::make_generator<MiniGenerator>(device_index == -1 ? current_device : device_index);
  }
};

const bool hooks_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new MiniHooks());  // lives as long as the process
  return true;
}();
}  // namespace minireg
// LITERALINCLUDE END: MINIMAL_BACKEND_HOOKS

// LITERALINCLUDE START: MINIMAL_BACKEND_AUTOCAST
#include <ATen/autocast_mode.h>
#include <torch/library.h>

// KERNEL_PRIVATEUSEONE expands to names of namespace at::autocast (WrapFunction,
// CastPolicy) without their namespace: its lines compile only inside that namespace.
namespace at::autocast {
// Operators without a policy run unchanged: the autocast key passes them on.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  KERNEL_PRIVATEUSEONE(mm, lower_precision_fp)     // to the autocast dtype
  KERNEL_PRIVATEUSEONE(addmm, lower_precision_fp)  // nn.Linear with a bias
  KERNEL_PRIVATEUSEONE(linear, lower_precision_fp)
  KERNEL_PRIVATEUSEONE(matmul, lower_precision_fp)
  KERNEL_PRIVATEUSEONE(mse_loss, fp32)  // losses in float32
}
}  // namespace at::autocast
// LITERALINCLUDE END: MINIMAL_BACKEND_AUTOCAST

// LITERALINCLUDE START: MINIMAL_BACKEND_C_API
// Plain C functions for the Python device module (ctypes): no pybind11 needed.
extern "C" int minireg_device_count() { return minireg::device_count(); }

extern "C" int minireg_current_device() { return minireg::current_device; }
// LITERALINCLUDE END: MINIMAL_BACKEND_C_API

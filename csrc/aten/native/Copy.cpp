// Copy.cpp: copies between CPU and openreg, within a device and across devices.
// LITERALINCLUDE START: COPY_INCLUDES
#include "Copy.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/_to_copy_native.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DeviceGuard.h>

#include "../../runtime/OpenRegHostAllocator.h"
#include "../../runtime/OpenRegLaunch.h"
#include "../../runtime/OpenRegStorage.h"
#include "../../runtime/OpenRegStream.h"
#include "Minimal.h"
// LITERALINCLUDE END: COPY_INCLUDES

namespace at::native::openreg {

namespace {
// LITERALINCLUDE START: COPY_HELPERS
using c10::openreg::getCurrentOpenRegStream;
using c10::openreg::KernelTensor;
using c10::openreg::launch_kernel;

// Same dtype, sizes and strides, a dense block, and the same conjugate and
// negative bits: one memcpy suffices. A conjugate view (x.conj()) holds x's
// bytes; copying them into a tensor without the bit would drop the conjugation.
bool bytes_match(const at::Tensor& a, const at::Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes() == b.sizes() && a.strides() == b.strides() &&
         a.is_non_overlapping_and_dense() && a.is_conj() == b.is_conj() && a.is_neg() == b.is_neg();
}

// Whether a device tensor's bytes, read raw, are its values: dense, and
// neither a conjugate nor a negative view.
bool plain_dense(const at::Tensor& t) {
  return t.is_non_overlapping_and_dense() && !t.is_conj() && !t.is_neg();
}

size_t block_bytes(const at::Tensor& t) { return t.numel() * t.element_size(); }

// A dense tensor like `t` (same device, dtype and, when dense, strides).
at::Tensor dense_like(const at::Tensor& t, c10::Device device, c10::ScalarType dtype) {
  auto options = t.options().device(device).dtype(dtype);
  if (t.is_non_overlapping_and_dense()) return at::empty_strided(t.sizes(), t.strides(), options);
  return at::empty(t.sizes(), options);
}
// LITERALINCLUDE END: COPY_HELPERS

// On-device conversion of dtype and layout: PyTorch's CPU copy kernel on kernel views.
// LITERALINCLUDE START: COPY_ON_DEVICE_KERNEL
void copy_on_device(const at::Tensor& dst, const at::Tensor& src) {
  c10::DeviceGuard guard(dst.device());
  launch_kernel([dst = KernelTensor(dst), src = KernelTensor(src)] { dst.cpu().copy_(src.cpu()); });
}
// LITERALINCLUDE END: COPY_ON_DEVICE_KERNEL

// LITERALINCLUDE START: COPY_MEMCPY_ON_STREAM
void memcpy_on_stream(void* dst, const void* src, size_t bytes, orMemcpyKind kind) {
  orStream_t stream = getCurrentOpenRegStream().stream();
  OPENREG_CHECK(orMemcpyAsync(dst, src, bytes, kind, stream));
  if (kind == orMemcpyDeviceToHost) {
    OPENREG_CHECK(orStreamSynchronize(stream));  // the host reads the result next
  }
}
// LITERALINCLUDE END: COPY_MEMCPY_ON_STREAM

// LITERALINCLUDE START: COPY_NON_BLOCKING
// A non_blocking copy between pinned host memory and the device returns at
// once. The pinned block is not reused until the copy is done: the host
// allocator waits for an event recorded after it on the stream.
bool try_copy_non_blocking(const at::Tensor& dst, const at::Tensor& src) {
  const at::Tensor& host = dst.is_cpu() ? dst : src;
  const at::Tensor& device = dst.is_cpu() ? src : dst;
  if (!bytes_match(dst, src) || !host.is_pinned()) return false;
  c10::DeviceGuard guard(device.device());
  auto stream = getCurrentOpenRegStream();
  OPENREG_CHECK(orMemcpyAsync(dst.mutable_data_ptr(), src.const_data_ptr(), block_bytes(dst),
                              dst.is_cpu() ? orMemcpyDeviceToHost : orMemcpyHostToDevice,
                              stream.stream()));
  const c10::Storage& storage = host.storage();
  c10::openreg::host_allocator()->record_event(storage.data_ptr().get(),
                                               storage.data_ptr().get_context(), stream);
  return true;
}
// LITERALINCLUDE END: COPY_NON_BLOCKING

// LITERALINCLUDE START: COPY_HOST_TO_DEVICE
void copy_host_to_device(const at::Tensor& dst, const at::Tensor& src) {
  c10::DeviceGuard guard(dst.device());
  if (bytes_match(dst, src)) {
    memcpy_on_stream(dst.mutable_data_ptr(), src.const_data_ptr(), block_bytes(dst),
                     orMemcpyHostToDevice);
    return;
  }
  // Convert on the host into a dense staging tensor, ship it, finish on the device.
  at::Tensor staging = dense_like(dst, c10::kCPU, dst.scalar_type());
  staging.copy_(src);
  if (bytes_match(dst, staging)) {
    memcpy_on_stream(dst.mutable_data_ptr(), staging.const_data_ptr(), block_bytes(dst),
                     orMemcpyHostToDevice);
    return;
  }
  at::Tensor on_device = at::empty_strided(staging.sizes(), staging.strides(), dst.options());
  memcpy_on_stream(on_device.mutable_data_ptr(), staging.const_data_ptr(), block_bytes(staging),
                   orMemcpyHostToDevice);
  copy_on_device(dst, on_device);
}
// LITERALINCLUDE END: COPY_HOST_TO_DEVICE

// LITERALINCLUDE START: COPY_DEVICE_TO_HOST
void copy_device_to_host(const at::Tensor& dst, const at::Tensor& src) {
  c10::DeviceGuard guard(src.device());
  if (bytes_match(src, dst)) {
    memcpy_on_stream(dst.mutable_data_ptr(), src.const_data_ptr(), block_bytes(src),
                     orMemcpyDeviceToHost);
    return;
  }
  at::Tensor dense_src = src;
  if (!plain_dense(src)) {  // resolve layout and conj/neg bits on the device first
    dense_src = at::empty(src.sizes(), src.options());
    copy_on_device(dense_src, src);
  }
  at::Tensor staging = dense_like(dense_src, c10::kCPU, dense_src.scalar_type());
  memcpy_on_stream(staging.mutable_data_ptr(), dense_src.const_data_ptr(), block_bytes(staging),
                   orMemcpyDeviceToHost);
  dst.copy_(staging);
}
// LITERALINCLUDE END: COPY_DEVICE_TO_HOST

// LITERALINCLUDE START: COPY_ACROSS_DEVICES
// Peer copy: the destination's stream waits for the source's work, and the
// source's stream waits for the copy, so neither side reuses memory too early.
void copy_across_devices(const at::Tensor& dst, const at::Tensor& src) {
  at::Tensor dense_src = src;
  if (!plain_dense(src)) {
    dense_src = at::empty(src.sizes(), src.options());
    copy_on_device(dense_src, src);
  }
  at::Tensor landing = bytes_match(dst, dense_src)
                           ? dst
                           : dense_like(dense_src, dst.device(), dense_src.scalar_type());
  auto src_stream = getCurrentOpenRegStream(src.device().index());
  auto dst_stream = getCurrentOpenRegStream(dst.device().index());
  c10::Event src_ready(c10::DeviceType::PrivateUse1);
  src_ready.record(src_stream.unwrap());
  src_ready.block(dst_stream.unwrap());
  {
    c10::DeviceGuard guard(dst.device());
    OPENREG_CHECK(orMemcpyAsync(landing.mutable_data_ptr(), dense_src.const_data_ptr(),
                                block_bytes(dense_src), orMemcpyDeviceToDevice,
                                dst_stream.stream()));
  }
  c10::Event copied(c10::DeviceType::PrivateUse1);
  copied.record(dst_stream.unwrap());
  copied.block(src_stream.unwrap());
  if (!landing.is_same(dst)) copy_on_device(dst, landing);
}
// LITERALINCLUDE END: COPY_ACROSS_DEVICES
}  // namespace

// LITERALINCLUDE START: COPY_FROM
// `self` and `dst` may be conjugate or negative views: the Conjugate and
// Negative keys pass _copy_from through (OpenRegCopy.cpp), and the copy
// resolves the bits (see bytes_match).
at::Tensor _copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  // `self` is the source. Every copy is ordered on the current stream; a copy
  // to pageable host memory returns once the data has arrived, and so does
  // any copy to the host unless it is non_blocking into pinned memory.
  TORCH_CHECK(self.defined() && dst.defined(), "copy: undefined tensor");
  if (dst.numel() == 0) return dst;
  // PyTorch's overlap rules, checked here so that this call raises them: a
  // destination that overlaps itself (an expanded tensor) or the source in
  // part (x[1:].copy_(x[:-1])) is refused; the device would copy either
  // without complaint, and write values the CPU never would.
  at::assert_no_internal_overlap(dst);
  at::assert_no_partial_overlap(dst, self);
  at::Tensor src = self.sizes() == dst.sizes() ? self : self.expand_as(dst);
  bool src_dev = src.is_privateuseone();
  bool dst_dev = dst.is_privateuseone();
  if (src_dev) c10::openreg::check_storage_fits(src);  // a shrunk storage: PyTorch's error
  if (dst_dev) c10::openreg::check_storage_fits(dst);
  if (non_blocking && src_dev != dst_dev && try_copy_non_blocking(dst, src)) return dst;
  if (src_dev && dst_dev) {
    if (src.device() != dst.device()) {
      copy_across_devices(dst, src);
    } else if (bytes_match(dst, src)) {
      c10::DeviceGuard guard(dst.device());
      memcpy_on_stream(dst.mutable_data_ptr(), src.const_data_ptr(), block_bytes(dst),
                       orMemcpyDeviceToDevice);
    } else {
      copy_on_device(dst, src);
    }
  } else if (dst_dev) {
    TORCH_CHECK(src.is_cpu(), "copy to openreg from ", src.device(), " is not supported");
    copy_host_to_device(dst, src);
  } else {
    TORCH_CHECK(dst.is_cpu(), "copy from openreg to ", dst.device(), " is not supported");
    copy_device_to_host(dst, src);
  }
  return dst;
}

at::Tensor _copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return openreg::_copy_from(self, dst, false);  // not ATen's at::_copy_from
}
// LITERALINCLUDE END: COPY_FROM

// LITERALINCLUDE START: COPY_TO_COPY
// x.to(dtype), x.half(), x.float(): PyTorch's _to_copy allocates the result
// and calls copy_, which reaches _copy_from through three more dispatcher
// calls, a large share of a small conversion's time. A contiguous device
// tensor converted on its own device is allocated (with its strides, as
// PyTorch preserves them) and converted here; any other conversion is
// PyTorch's _to_copy.
at::Tensor _to_copy(const at::Tensor& self, std::optional<c10::ScalarType> dtype,
                    std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                    std::optional<bool> pin_memory, bool non_blocking,
                    std::optional<c10::MemoryFormat> memory_format) {
  c10::MemoryFormat format = memory_format.value_or(c10::MemoryFormat::Preserve);
  bool here = self.is_privateuseone() && (!device.has_value() || *device == self.device()) &&
              layout.value_or(c10::kStrided) == c10::kStrided && self.layout() == c10::kStrided &&
              !pin_memory.value_or(false);
  bool plain = self.is_contiguous() && !self.is_conj() && !self.is_neg() &&
               (format == c10::MemoryFormat::Preserve || format == c10::MemoryFormat::Contiguous);
  if (!here || !plain) {
    return at::native::_to_copy(self, dtype, layout, device, pin_memory, non_blocking,
                                memory_format);
  }
  c10::openreg::check_storage_fits(self);
  c10::ScalarType type = dtype.value_or(self.scalar_type());
  at::Tensor out = format == c10::MemoryFormat::Preserve
                       ? empty_strided(self.sizes(), self.strides(), type, std::nullopt,
                                       self.device(), std::nullopt)
                       : empty_openreg(self.sizes(), type, self.device());
  if (out.numel() > 0) copy_on_device(out, self);
  return out;
}
// LITERALINCLUDE END: COPY_TO_COPY

}  // namespace at::native::openreg

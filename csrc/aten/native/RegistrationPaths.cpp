// RegistrationPaths.cpp: a stub kernel, custom operators with autograd, an autograd override, a composite override.
#include "RegistrationPaths.h"

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/selu.h>
#include <ATen/ops/sign.h>
#include <ATen/ops/where.h>
#include <c10/core/DeviceGuard.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cstring>

#include "../../runtime/OpenRegLaunch.h"
#include "../../runtime/OpenRegStream.h"

namespace at::native::openreg {

using c10::openreg::KernelTensor;
using c10::openreg::launch_kernel;

// abs.out's shared implementation builds a TensorIterator over the device
// tensors and calls abs_stub for the iterator's device type: this kernel.
void abs_kernel(at::TensorIteratorBase& iter) {
  c10::DeviceGuard guard(iter.device());
  launch_kernel([out = KernelTensor(iter.tensor(0)), in = KernelTensor(iter.tensor(1))] {
    at::Tensor result = out.cpu();
    at::abs_out(result, in.cpu());  // the CPU's own abs, on device memory
  });
}

// LITERALINCLUDE START: CUSTOM_ABS_KERNELS
at::Tensor custom_abs(const at::Tensor& input) {
  at::Tensor out = at::empty_like(input);
  if (out.numel() == 0) return out;
  c10::DeviceGuard guard(input.device());
  launch_kernel([out = KernelTensor(out), in = KernelTensor(input)] {
    at::Tensor result = out.cpu();
    at::abs_out(result, in.cpu());
  });
  return out;
}

// The Meta kernel: shapes only, for torch.compile, FakeTensor and shape checks.
at::Tensor custom_abs_meta(const at::Tensor& input) { return at::empty_like(input); }

// Autograd: d|x|/dx = sign(x). forward runs below autograd, on the device kernel.
struct CustomAbs : public torch::autograd::Function<CustomAbs> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input) {
    ctx->save_for_backward({input});
    // Below autograd: calling the operator again would re-enter this kernel.
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    static auto op = c10::Dispatcher::singleton()
                         .findSchemaOrThrow("openreg::custom_abs", "")
                         .typed<at::Tensor(const at::Tensor&)>();
    return op.call(input);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    at::Tensor input = ctx->get_saved_variables()[0];
    return {grads[0] * at::sign(input)};
  }
};

at::Tensor custom_abs_autograd(const at::Tensor& input) { return CustomAbs::apply(input); }
// LITERALINCLUDE END: CUSTOM_ABS_KERNELS

// LITERALINCLUDE START: CUSTOM_ALIASING_FUNCTION
// An autograd Function whose output is a view of its input: autograd must
// know the output aliases the input, so in-place changes are tracked.
at::Tensor custom_autograd_fn_aliasing(const at::Tensor& input) { return input.view({-1}); }

struct AliasingFunction : public torch::autograd::Function<AliasingFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input) {
    ctx->saved_data["sizes"] = input.sizes().vec();
    return input.view({-1});  // a view, which Function::apply marks as such
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    return {grads[0].reshape(ctx->saved_data["sizes"].toIntVector())};
  }
};

at::Tensor custom_autograd_fn_aliasing_autograd(const at::Tensor& input) {
  return AliasingFunction::apply(input);
}
// LITERALINCLUDE END: CUSTOM_ALIASING_FUNCTION

// LITERALINCLUDE START: AUTOGRAD_SELU_OVERRIDE
// selu is CompositeImplicitAutograd: its gradient normally comes from its
// decomposition. On openreg a Function supplies the backward formula directly.
struct SeluFunction : public torch::autograd::Function<SeluFunction> {
  static constexpr double kAlpha = 1.6732632423543772848170429916717;
  static constexpr double kScale = 1.0507009873554804934193349852946;

  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& self) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;  // or at::selu re-enters this Function
    at::Tensor out = at::selu(self);                      // the composite forward, on the device
    ctx->save_for_backward({self});
    return out;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    at::Tensor x = ctx->get_saved_variables()[0];
    at::Tensor slope = at::where(x > 0, at::ones_like(x) * kScale, at::exp(x) * (kScale * kAlpha));
    return {grads[0] * slope};
  }
};

at::Tensor selu_autograd(const at::Tensor& self) { return SeluFunction::apply(self); }
// LITERALINCLUDE END: AUTOGRAD_SELU_OVERRIDE

// clone's composite implementation is empty_like + copy_: two dispatches and
// a generic copy. For dense tensors the device does it with one copy kernel,
// unless a conjugate or negative view needs its values resolved by the copy.
at::Tensor clone(const at::Tensor& self, std::optional<c10::MemoryFormat> memory_format) {
  auto format = memory_format.value_or(c10::MemoryFormat::Preserve);
  at::Tensor out = at::empty_like(self, self.options(), format);
  // A private per-tensor attribute (Serialization and storage) travels with the
  // values: tensor.clone() and copy.deepcopy of an nn.Parameter keep it.
  if (auto meta = self.unsafeGetTensorImpl()->get_backend_meta_intrusive_ptr()) {
    out.unsafeGetTensorImpl()->set_backend_meta(meta->clone(meta));
  }
  if (self.numel() == 0) return out;
  // A storage-less zero tensor (autograd's known-zero gradient) reaches clone
  // directly: its clone is real zeros.
  if (self.unsafeGetTensorImpl()->_is_zerotensor()) return out.zero_();
  if (self.is_non_overlapping_and_dense() && out.strides() == self.strides() && !self.is_conj() &&
      !self.is_neg()) {
    c10::openreg::check_storage_fits(self);  // raw pointers skip KernelTensor's check
    c10::DeviceGuard guard(self.device());
    // memcpy split across the kernel's threads, as PyTorch's CPU clone is split
    // (the driver's device-to-device copy runs on the stream's worker alone).
    const char* src = static_cast<const char*>(self.const_data_ptr());
    char* dst = static_cast<char*>(out.mutable_data_ptr());
    int64_t bytes = self.numel() * self.element_size();
    c10::openreg::launch_kernel([src, dst, bytes] {
      const char* from = c10::openreg::kernel_pointer(src);
      char* to = c10::openreg::kernel_pointer(dst);
      c10::openreg::kernel_parallel_for(0, bytes, 128 * 1024, [&](int64_t begin, int64_t end) {
        std::memcpy(to + begin, from + begin, end - begin);
      });
    });
    return out;
  }
  return out.copy_(self);
}

}  // namespace at::native::openreg

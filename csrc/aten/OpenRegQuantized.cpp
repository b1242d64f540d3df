// OpenRegQuantized.cpp: registers per-tensor-affine quantized tensors on openreg.
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/q_scale_native.h>
#include <ATen/ops/q_zero_point_native.h>
#include <ATen/ops/qscheme_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/squeeze_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/unsqueeze_native.h>
#include <ATen/ops/view_native.h>
#include <torch/library.h>

#include "native/Fallback.h"
#include "native/Quantized.h"

#include <string>

namespace at::native::openreg {

// LITERALINCLUDE START: QUANTIZED_REGISTER_STRUCTURE
// A quantized openreg tensor is PyTorch's QTensorImpl over openreg memory: it
// dispatches on QuantizedPrivateUse1. Making one, reading its quantization
// parameters and viewing it never touch the data: PyTorch's kernels for
// QuantizedCPU serve here as they are. Copies move the integer representation.
TORCH_LIBRARY_IMPL(aten, QuantizedPrivateUse1, m) {
  m.impl("_empty_affine_quantized", TORCH_FN(empty_affine_quantized));
  m.impl("empty_quantized", TORCH_FN(empty_quantized));
  m.impl("empty_like", TORCH_FN(at::native::empty_like_quantized));
  m.impl("clone", TORCH_FN(at::native::quantized_clone));
  m.impl("q_scale", TORCH_FN(at::native::q_scale_quant));
  m.impl("q_zero_point", TORCH_FN(at::native::q_zero_point_quant));
  m.impl("qscheme", TORCH_FN(at::native::qscheme_quant));
  m.impl("_copy_from", TORCH_FN(quantized_copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(quantized_copy_from_and_resize));
  m.impl("_to_copy", TORCH_FN(quantized_to_copy));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(at::native::set_storage_quantized_));
  // Views alias the device memory and keep the quantizer.
  m.impl("as_strided", TORCH_FN(at::native::as_strided_qtensorimpl));
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("squeeze",
         TORCH_FN(static_cast<at::Tensor (*)(const at::Tensor&)>(&at::native::squeeze_quantized)));
  m.impl("squeeze.dim", TORCH_FN(static_cast<at::Tensor (*)(const at::Tensor&, int64_t)>(
                            &at::native::squeeze_quantized)));
  m.impl("squeeze.dims", TORCH_FN(static_cast<at::Tensor (*)(const at::Tensor&, at::IntArrayRef)>(
                             &at::native::squeeze_quantized)));
  m.impl("unsqueeze", TORCH_FN(at::native::unsqueeze_quantized));
}
// LITERALINCLUDE END: QUANTIZED_REGISTER_STRUCTURE

// A quantized CPU tensor that is not dense moves to openreg through the same
// _to_copy (on the CPU, only the moves to another device change).
TORCH_LIBRARY_IMPL(aten, QuantizedCPU, m) { m.impl("_to_copy", TORCH_FN(quantized_to_copy)); }

// LITERALINCLUDE START: QUANTIZED_REGISTER_COMPUTE
// Every other operator on a quantized openreg tensor computes (flip,
// int_repr, dequantize, equal): it runs the CPU's quantized kernel on copies.
// Quantizing a dense openreg tensor reaches the dense fallback and comes back
// quantized through the copies above.
TORCH_LIBRARY_IMPL(_, QuantizedPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&quantized_cpu_fallback>());
}
// LITERALINCLUDE END: QUANTIZED_REGISTER_COMPUTE

// LITERALINCLUDE START: QUANTIZED_REGISTER_PER_CHANNEL
// Per-channel quantization keeps its scales and zero points in tensors of
// their own; openreg refuses it where such a tensor would be made.
TORCH_LIBRARY_IMPL(aten, QuantizedPrivateUse1, m) {
  m.impl("_empty_per_channel_affine_quantized",
         torch::CppFunction::makeFromBoxedFunction<&per_channel_not_supported>());
}
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("quantize_per_channel",
         torch::CppFunction::makeFromBoxedFunction<&per_channel_not_supported>());
  m.impl("_make_per_channel_quantized_tensor",
         torch::CppFunction::makeFromBoxedFunction<&per_channel_not_supported>());
}
// LITERALINCLUDE END: QUANTIZED_REGISTER_PER_CHANNEL

// LITERALINCLUDE START: QUANTIZED_REGISTER_BY_NAME
// As for sparse tensors: operators with a QuantizedCPU kernel and a
// composite (eq, sort, clamp, cat) get the quantized fallback by name
// (fallback_by_name, Fallback.h).
namespace {
const int kQuantizedByName = fallback_by_name<&quantized_cpu_fallback>(
    c10::DispatchKey::QuantizedPrivateUse1, c10::DispatchKey::QuantizedCPU);
}  // namespace
// LITERALINCLUDE END: QUANTIZED_REGISTER_BY_NAME

}  // namespace at::native::openreg

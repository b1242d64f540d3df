// SameDevice.h: PyTorch's rule that an operator's tensors share one device, checked on the host.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <initializer_list>
#include <optional>
#include <string>

namespace at::native::openreg {

// Collects an operator's tensors and checks PyTorch's rule: one device, which
// 0-dim CPU tensors (Python numbers) may join, as on CUDA.
class SameDevice {
 public:
  // `written`: the operator writes it (in place, out=): a CPU scalar is
  // accepted as an input only.
  void add(const at::Tensor& t, bool written = false);
  // Raises "Expected all tensors to be on the same device" if two devices
  // met; returns the openreg device, if any tensor was on one.
  std::optional<c10::Device> check(const std::string& op) const;

 private:
  std::optional<c10::Device> openreg_;
  std::optional<c10::Device> other_;
};

// The openreg device all tensors share (there must be one); see SameDevice.
c10::Device common_device(const char* op, std::initializer_list<at::Tensor> tensors);

// The same rule for a boxed call: raises PyTorch's "Expected all tensors to be
// on the same device" unless the operator's tensors share one device (0-dim
// CPU tensors may join); returns the openreg device, if any.
std::optional<c10::Device> check_same_device(const c10::OperatorHandle& op,
                                             const torch::jit::Stack& stack);

}  // namespace at::native::openreg

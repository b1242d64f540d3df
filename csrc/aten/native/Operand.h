// Operand.h: checks and captures shared by the native kernels.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>

#include "../../runtime/OpenRegLaunch.h"

namespace at::native::openreg {

// An input as a kernel sees it: a device tensor through the kernel view, or a
// 0-dim CPU tensor (a Python number) captured by value.
class Operand {
 public:
  explicit Operand(const at::Tensor& t);
  at::Tensor cpu() const { return device_ ? device_->cpu() : host_; }

 private:
  std::optional<c10::openreg::KernelTensor> device_;
  at::Tensor host_;
};

// Collects an operator's tensors and checks PyTorch's rule: one device, which
// 0-dim CPU tensors (Python numbers) may join, as on CUDA.
class SameDevice {
 public:
  void add(const at::Tensor& t);
  // Raises "Expected all tensors to be on the same device" if two devices
  // met; returns the openreg device, if any tensor was on one.
  std::optional<c10::Device> check(const std::string& op) const;

 private:
  std::optional<c10::Device> openreg_;
  std::optional<c10::Device> other_;
};

// The openreg device all tensors share (there must be one); see SameDevice.
c10::Device common_device(const char* op, std::initializer_list<at::Tensor> tensors);

// The dtype checks an out= or in-place result gets on CPU, done before launch.
void check_result(const char* op, const at::Tensor& out, c10::ScalarType result_dtype,
                  c10::IntArrayRef result_shape);

}  // namespace at::native::openreg

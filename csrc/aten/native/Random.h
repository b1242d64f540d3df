// Random.h: the random distributions beyond uniform/normal/random/bernoulli (see Native.h).
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>

namespace at::native::openreg {

at::Tensor& exponential_(at::Tensor& self, double lambda, std::optional<at::Generator> gen);
at::Tensor& cauchy_(at::Tensor& self, double median, double sigma,
                    std::optional<at::Generator> gen);
at::Tensor& log_normal_(at::Tensor& self, double mean, double std,
                        std::optional<at::Generator> gen);
at::Tensor& geometric_(at::Tensor& self, double p, std::optional<at::Generator> gen);

// A boxed kernel for any random operator: PyTorch's CPU algorithm on device
// memory, with a CPU generator seeded from the openreg generator's stream.
void seeded_cpu_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                       torch::jit::Stack* stack);

}  // namespace at::native::openreg

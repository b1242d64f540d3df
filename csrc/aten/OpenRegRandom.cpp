// OpenRegRandom.cpp: registers the random distributions beyond those in OpenRegNative.cpp.
#include <torch/library.h>

#include "native/Random.h"

namespace at::native::openreg {

namespace {
// Random operators whose algorithm (rejection sampling, sorting, sampling
// without replacement) is PyTorch's CPU code, run with a CPU generator seeded
// from openreg's stream: see seeded_cpu_kernel.
constexpr const char* kSeededRandom[] = {
    "multinomial",
    "multinomial.out",
    "normal.Tensor_float",
    "normal.Tensor_float_out",
    "normal.float_Tensor",
    "normal.float_Tensor_out",
    "normal.Tensor_Tensor",
    "normal.Tensor_Tensor_out",
    "normal_functional",
    "poisson",
    "binomial",
    "_standard_gamma",
    "_sample_dirichlet",
    "randperm.generator_out",
    "rrelu_with_noise",
    "rrelu_with_noise_",
    "rrelu_with_noise.out",
    "_fused_dropout",
};
}  // namespace

// LITERALINCLUDE START: RANDOM_DISTRIBUTIONS_REGISTER
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("exponential_", TORCH_FN(exponential_));
  m.impl("cauchy_", TORCH_FN(cauchy_));
  m.impl("log_normal_", TORCH_FN(log_normal_));
  m.impl("geometric_", TORCH_FN(geometric_));
  for (const char* name : kSeededRandom) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&seeded_cpu_kernel>());
  }
}
// LITERALINCLUDE END: RANDOM_DISTRIBUTIONS_REGISTER

}  // namespace at::native::openreg

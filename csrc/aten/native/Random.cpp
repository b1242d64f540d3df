// Random.cpp: every random operator, drawing from the openreg generator.
#include <ATen/Dispatch.h>
#include <ATen/Dispatch_v2.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <ATen/core/DistributionsHelper.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/view_as_real.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/DistributionTemplates.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>

#include "../../runtime/OpenRegGenerator.h"
#include "Borrowed.h"
#include "Boxed.h"
#include "Minimal.h"
#include "Native.h"
#include "Random.h"
#include "SameDevice.h"

namespace at::native::openreg {

namespace {
using c10::openreg::KernelTensor;
using c10::openreg::launch_kernel;
using c10::openreg::OpenRegGeneratorImpl;

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"):
// a counter-based generator. Number i of a stream is a pure function of
// (seed, counter i), so a kernel can produce any slice without sequential state.
struct Philox {
  uint64_t seed;

  static void round(uint32_t c[4], uint32_t k[2]) {
    uint64_t p0 = uint64_t{0xD2511F53} * c[0];
    uint64_t p1 = uint64_t{0xCD9E8D57} * c[2];
    uint32_t next[4] = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1),
                        uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0)};
    for (int i = 0; i < 4; ++i) c[i] = next[i];
    k[0] += 0x9E3779B9;
    k[1] += 0xBB67AE85;
  }

  // Four 32-bit numbers for block `counter` of the stream.
  void block(uint64_t counter, uint32_t out[4]) const {
    uint32_t c[4] = {uint32_t(counter), uint32_t(counter >> 32), 0, 0};
    uint32_t k[2] = {uint32_t(seed), uint32_t(seed >> 32)};
    for (int r = 0; r < 10; ++r) round(c, k);
    for (int i = 0; i < 4; ++i) out[i] = c[i];
  }
};

// LITERALINCLUDE START: RANDOM_DRAW
// Each element draws one block (four numbers), so element i of a launch
// uses block `first + i`: independent of the device's timing and threads.
struct Draw {
  Philox philox;
  uint64_t first;

  void operator()(int64_t i, uint32_t out[4]) const {
    philox.block(first + static_cast<uint64_t>(i), out);
  }
  static double unit(uint32_t a, uint32_t b) {  // [0, 1) with 53 random bits
    return ((uint64_t(a) << 21) ^ (b >> 11)) * 0x1.0p-53;
  }
};
// LITERALINCLUDE END: RANDOM_DRAW

// Blocks are independent of each other, so a kernel spreads its elements over
// the device's threads; which numbers an element gets does not depend on how.
constexpr int64_t kRandomGrain = 4096;  // Philox work per chunk that outweighs waking a thread

template <class F>
void for_each_element(int64_t n, const F& f) {
  c10::openreg::kernel_parallel_for(0, n, kRandomGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) f(i);
  });
}

// LITERALINCLUDE START: RANDOM_COIN_FLIPS
// A coin flip needs 32 random bits, not a block: element i takes word i % 4 of
// block first + i / 4, so n flips reserve (n + 3) / 4 blocks. It is kept when
// the word is below keep * 2^32 (bernoulli_ and dropout).
uint64_t coin_blocks(int64_t n) { return static_cast<uint64_t>((n + 3) / 4); }

uint64_t coin_threshold(double keep) { return static_cast<uint64_t>(keep * 0x1.0p32); }

template <class F>
void for_each_coin(const Draw& draw, int64_t n, uint64_t threshold, const F& f) {
  c10::openreg::kernel_parallel_for(0, static_cast<int64_t>(coin_blocks(n)), kRandomGrain / 4,
                                    [&](int64_t begin, int64_t end) {
                                      for (int64_t b = begin; b < end; ++b) {
                                        uint32_t r[4];
                                        draw(b, r);
                                        for (int64_t k = 0; k < 4 && 4 * b + k < n; ++k)
                                          f(4 * b + k, r[k] < threshold);
                                      }
                                    });
}
// LITERALINCLUDE END: RANDOM_COIN_FLIPS

// LITERALINCLUDE START: RANDOM_RESERVE
// Reserves `numel` blocks of the generator's stream, on the host, in launch
// order: the kernel then knows exactly which numbers are its own.
Draw reserve(c10::Device device, uint64_t blocks, std::optional<at::Generator> gen) {
  TORCH_CHECK(!c10::openreg::getCurrentOpenRegStream().is_capturing(),
              "random operators cannot "
              "be captured in an openreg graph: every replay would repeat the numbers drawn at "
              "capture");
  auto* generator = at::get_generator_or_default<OpenRegGeneratorImpl>(
      gen, c10::openreg::default_generator(device.index()));
  TORCH_CHECK(generator->device() == device, "expected a generator on ", device, " but got one on ",
              generator->device());
  std::lock_guard<std::mutex> lock(generator->mutex_);
  auto [seed, offset] = generator->reserve(blocks);
  return {{seed}, offset};
}

Draw reserve(const at::Tensor& self, std::optional<at::Generator> gen) {
  return reserve(self.device(), static_cast<uint64_t>(self.numel()), gen);
}
// LITERALINCLUDE END: RANDOM_RESERVE

// Runs fill(value_ref, i) for every element of `self` inside a kernel. Works
// on a contiguous view, copied back when `self` is strided.
template <class Fill>
at::Tensor& launch_fill(at::Tensor& self, Fill fill) {
  if (self.numel() == 0) return self;
  at::assert_no_internal_overlap(self);  // an expanded target: refused on the host, as on the CPU
  c10::DeviceGuard guard(self.device());
  launch_kernel([out = KernelTensor(self), fill] {
    at::Tensor target = out.cpu();
    at::Tensor dense =
        target.is_contiguous() ? target : at::empty(target.sizes(), target.options());
    fill(dense);
    if (!dense.is_same(target)) target.copy_(dense);
  });
  return self;
}

void check_floating(const at::Tensor& self, const char* op) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, " expects a floating point tensor, got ",
              self.scalar_type());
}
}  // namespace

namespace {
at::Tensor& fill_uniform(at::Tensor& self, double from, double to,
                         std::optional<at::Generator> gen) {
  Draw draw = reserve(self, gen);
  return launch_fill(self, [draw, from, to](at::Tensor& t) {
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, t.scalar_type(), "uniform_", [&] {
      auto* data = t.data_ptr<scalar_t>();
      for_each_element(t.numel(), [&](int64_t i) {
        uint32_t r[4];
        draw(i, r);
        data[i] = static_cast<scalar_t>(from + (to - from) * Draw::unit(r[0], r[1]));
      });
    });
  });
}

// PyTorch's uniform_impl_ (as random_from_to_impl below) checks the bounds
// against the dtype, clamps them, treats a complex tensor as its real and
// imaginary parts, then calls back with the range to fill.
template <typename RNG>
struct UniformFill {
  void operator()(at::TensorIteratorBase& iter, double from, double to,
                  std::optional<at::Generator> gen) {
    at::Tensor self = iter.tensor(0);
    fill_uniform(self, from, to, gen);
  }
};
}  // namespace

at::Tensor& uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  if (!self.is_complex()) check_floating(self, "uniform_");
  return at::native::templates::uniform_impl_<UniformFill, at::Generator>(self, from, to, gen);
}

// LITERALINCLUDE START: RANDOM_NORMAL
at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  if (self.is_complex()) {  // each component N(mean, std^2 / 2), as PyTorch does
    at::Tensor parts = at::view_as_real(self);
    normal_(parts, mean, std / std::sqrt(2.0), gen);
    return self;
  }
  check_floating(self, "normal_");
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  Draw draw = reserve(self, gen);
  return launch_fill(self, [draw, mean, std](at::Tensor& t) {
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, t.scalar_type(), "normal_", [&] {
      auto* data = t.data_ptr<scalar_t>();
      for_each_element(t.numel(), [&](int64_t i) {
        uint32_t r[4];
        draw(i, r);
        // Box-Muller: two uniforms become one standard normal sample.
        double u1 = 1.0 - Draw::unit(r[0], r[1]);  // (0, 1]: log is finite
        double u2 = Draw::unit(r[2], r[3]);
        double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
        data[i] = static_cast<scalar_t>(mean + std * z);
      });
    });
  });
}
// LITERALINCLUDE END: RANDOM_NORMAL

// LITERALINCLUDE START: RANDOM_INTEGERS
namespace {
// Integers uniform in [from, from + range); range 0 means the full 64 bits.
at::Tensor& random_in(at::Tensor& self, int64_t from, uint64_t range,
                      std::optional<at::Generator> gen) {
  Draw draw = reserve(self, gen);
  return launch_fill(self, [draw, from, range](at::Tensor& t) {
    AT_DISPATCH_V2(t.scalar_type(), "random_", AT_WRAP([&] {
                     auto* data = t.data_ptr<scalar_t>();
                     for_each_element(t.numel(), [&](int64_t i) {
                       uint32_t r[4];
                       draw(i, r);
                       uint64_t bits = (uint64_t(r[0]) << 32) | r[1];
                       uint64_t offset = range == 0 ? bits : bits % range;
                       data[i] = static_cast<scalar_t>(static_cast<int64_t>(from + offset));
                     });
                   }),
                   AT_EXPAND(AT_ALL_TYPES), at::kBool, at::kHalf, at::kBFloat16,
                   AT_EXPAND(AT_BAREBONES_UNSIGNED_TYPES));
  });
}

// The default range of random_(): every integer the dtype holds exactly.
uint64_t default_range(at::ScalarType dtype) {
  switch (dtype) {
    case at::kBool: return 2;
    case at::kHalf: return (uint64_t{1} << 11) + 1;
    case at::kBFloat16: return (uint64_t{1} << 8) + 1;
    case at::kFloat: return (uint64_t{1} << 24) + 1;
    case at::kDouble: return (uint64_t{1} << 53) + 1;
    case at::kLong: return uint64_t{1} << 63;
    default: {
      uint64_t bits = c10::elementSize(dtype) * 8;
      bool is_signed = at::isSignedType(dtype);
      return uint64_t{1} << (bits - (is_signed ? 1 : 0));
    }
  }
}
}  // namespace

at::Tensor& random_(at::Tensor& self, std::optional<at::Generator> gen) {
  return random_in(self, 0, default_range(self.scalar_type()), gen);
}

// PyTorch's own validation of a range, shared by its CPU and CUDA kernels
// (from < to, both representable in the dtype, a warning past the integers a
// float holds exactly), calls back with the range it settled on: the same
// checks, and the same messages, for openreg.
template <typename RNG>
struct RandomFromTo {
  void operator()(at::TensorIteratorBase& iter, uint64_t range, int64_t from,
                  std::optional<at::Generator> gen) {
    at::Tensor self = iter.tensor(0);
    random_in(self, from, range, gen);
  }
  void operator()(at::TensorIteratorBase& iter, std::optional<at::Generator> gen) {
    at::Tensor self = iter.tensor(0);  // every int64_t: the full 64 bits
    random_in(self, std::numeric_limits<int64_t>::lowest(), 0, gen);
  }
};

at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                        std::optional<at::Generator> gen) {
  return at::native::templates::random_from_to_impl<RandomFromTo, at::Generator>(self, from, to,
                                                                                 gen);
}

at::Tensor& random_to(at::Tensor& self, int64_t to, std::optional<at::Generator> gen) {
  return random_from(self, 0, to, gen);
}
// LITERALINCLUDE END: RANDOM_INTEGERS

at::Tensor& bernoulli_float(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  Draw draw = reserve(self.device(), coin_blocks(self.numel()), gen);
  return launch_fill(self, [draw, threshold = coin_threshold(p)](at::Tensor& t) {
    AT_DISPATCH_ALL_TYPES_AND3(
        at::kBool, at::kHalf, at::kBFloat16, t.scalar_type(), "bernoulli_", [&] {
          auto* data = t.data_ptr<scalar_t>();
          for_each_coin(draw, t.numel(), threshold,
                        [&](int64_t i, bool heads) { data[i] = static_cast<scalar_t>(heads); });
        });
  });
}

at::Tensor& bernoulli_tensor(at::Tensor& self, const at::Tensor& p,
                             std::optional<at::Generator> gen) {
  common_device("bernoulli_", {self, p});
  at::assert_no_internal_overlap(self);
  Draw draw = reserve(self, gen);
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  at::Tensor probs = p.expand(self.sizes());
  launch_kernel([out = KernelTensor(self), prob = Operand(probs), draw] {
    at::Tensor target = out.cpu();
    at::Tensor chances = prob.cpu().to(at::kDouble).contiguous();
    const double* q = chances.const_data_ptr<double>();
    at::Tensor dense = at::empty(target.sizes(), target.options());
    AT_DISPATCH_ALL_TYPES_AND3(at::kBool, at::kHalf, at::kBFloat16, dense.scalar_type(),
                               "bernoulli_", [&] {
                                 auto* data = dense.data_ptr<scalar_t>();
                                 for (int64_t i = 0; i < dense.numel(); ++i) {
                                   uint32_t r[4];
                                   draw(i, r);
                                   data[i] = static_cast<scalar_t>(Draw::unit(r[0], r[1]) < q[i]);
                                 }
                               });
    target.copy_(dense);
  });
  return self;
}

// torch.bernoulli(p, out=t): t takes p's shape, then one coin per element.
at::Tensor& bernoulli_out(const at::Tensor& self, std::optional<at::Generator> gen,
                          at::Tensor& out) {
  common_device("bernoulli", {self, out});
  at::native::resize_output(out, self.sizes());
  return bernoulli_tensor(out, self, gen);
}

}  // namespace at::native::openreg

namespace at::native::openreg {

// LITERALINCLUDE START: RANDOM_NATIVE_DROPOUT
// Dropout keeps each element with probability 1 - p and scales the kept ones.
// One kernel flips the coins, writes the mask and the result: one pass over
// the data instead of three (bernoulli_, then two multiplications). Its
// arithmetic is theirs, (x * kept) * scale in the dtype's compute type, so
// both paths give the same numbers for the same seed.
std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p,
                                                  std::optional<bool> train) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  at::Tensor mask = empty_openreg(input.sizes(), at::kBool, input.device());
  if (train.has_value() && !*train) {
    mask.fill_(true);
    return {input.clone(), mask};
  }
  double scale = p == 1 ? 0.0 : 1.0 / (1.0 - p);
  if (!input.is_contiguous() || !at::isFloatingType(input.scalar_type())) {
    bernoulli_float(mask, 1 - p, std::nullopt);
    return {at::mul(at::mul(input, mask), scale), mask};
  }
  at::Tensor out = empty_openreg(input.sizes(), input.scalar_type(), input.device());
  if (input.numel() == 0) return {out, mask};
  Draw draw = reserve(input.device(), coin_blocks(input.numel()), std::nullopt);
  c10::DeviceGuard guard(input.device());
  launch_kernel([in = KernelTensor(input), o = KernelTensor(out), m = KernelTensor(mask), draw,
                 threshold = coin_threshold(1 - p), scale] {
    at::Tensor x = in.cpu(), y = o.cpu(), kept = m.cpu();
    AT_DISPATCH_FLOATING_TYPES_AND2(
        at::kHalf, at::kBFloat16, x.scalar_type(), "native_dropout", [&] {
          using acc_t = at::opmath_type<scalar_t>;
          const scalar_t* xs = x.const_data_ptr<scalar_t>();
          scalar_t* ys = y.mutable_data_ptr<scalar_t>();
          bool* ks = kept.mutable_data_ptr<bool>();
          const acc_t s = static_cast<acc_t>(scale);
          for_each_coin(draw, x.numel(), threshold, [&](int64_t i, bool heads) {
            ks[i] = heads;
            auto masked =
                static_cast<scalar_t>(static_cast<acc_t>(xs[i]) * static_cast<acc_t>(heads));
            ys[i] = static_cast<scalar_t>(static_cast<acc_t>(masked) * s);
          });
        });
  });
  return {out, mask};
}
// LITERALINCLUDE END: RANDOM_NATIVE_DROPOUT

// grad_output * mask * scale. Autograd passes scale = 1 / (1 - p) (0 for
// p == 1) in training, 1 otherwise.
at::Tensor native_dropout_backward(const at::Tensor& grad_output, const at::Tensor& mask,
                                   double scale) {
  return at::mul(at::mul(grad_output, mask), scale);
}

}  // namespace at::native::openreg

namespace at::native::openreg {

// LITERALINCLUDE START: RANDOM_INVERSE_CDF
// Distributions with a closed-form inverse CDF: one uniform u in [0, 1) per
// element, transformed. Same block layout as uniform_, so a seed reproduces them.
template <class Transform>
at::Tensor& draw_transformed(at::Tensor& self, std::optional<at::Generator> gen, const char* op,
                             Transform transform) {
  check_floating(self, op);
  Draw draw = reserve(self, gen);
  return launch_fill(self, [draw, transform](at::Tensor& t) {
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, t.scalar_type(), "draw", [&] {
      auto* data = t.data_ptr<scalar_t>();
      for_each_element(t.numel(), [&](int64_t i) {
        uint32_t r[4];
        draw(i, r);
        data[i] = static_cast<scalar_t>(transform(Draw::unit(r[0], r[1]), r));
      });
    });
  });
}

at::Tensor& exponential_(at::Tensor& self, double lambda, std::optional<at::Generator> gen) {
  TORCH_CHECK(lambda > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambda);
  return draw_transformed(self, gen, "exponential_", [lambda](double u, const uint32_t*) {
    return -std::log1p(-u) / lambda;  // 1 - u is in (0, 1]: finite
  });
}

at::Tensor& cauchy_(at::Tensor& self, double median, double sigma,
                    std::optional<at::Generator> gen) {
  TORCH_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  return draw_transformed(self, gen, "cauchy_", [median, sigma](double u, const uint32_t*) {
    return median + sigma * std::tan(M_PI * (u - 0.5));
  });
}

at::Tensor& log_normal_(at::Tensor& self, double mean, double std,
                        std::optional<at::Generator> gen) {
  TORCH_CHECK(std > 0.0, "log_normal_ expects std > 0.0, but found std=", std);
  return draw_transformed(self, gen, "log_normal_", [mean, std](double, const uint32_t* r) {
    double u1 = 1.0 - Draw::unit(r[0], r[1]);
    double u2 = Draw::unit(r[2], r[3]);
    return std::exp(mean + std * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2));
  });
}
// LITERALINCLUDE END: RANDOM_INVERSE_CDF

at::Tensor& geometric_(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  TORCH_CHECK(0 < p && p < 1, "geometric_ expects p to be in (0, 1), but got p=", p);
  Draw draw = reserve(self, gen);
  return launch_fill(self, [draw, p](at::Tensor& t) {
    AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, t.scalar_type(), "geometric_", [&] {
      auto* data = t.data_ptr<scalar_t>();
      for_each_element(t.numel(), [&](int64_t i) {
        uint32_t r[4];
        draw(i, r);
        double u = 1.0 - Draw::unit(r[0], r[1]);  // (0, 1]
        data[i] = static_cast<scalar_t>(std::ceil(std::log(u) / std::log1p(-p)));
      });
    });
  });
}

// LITERALINCLUDE START: RANDOM_SEEDED_CPU_KERNEL
// Every other random operator (multinomial, poisson, binomial, gamma,
// dirichlet, randperm, rrelu, normal with tensor parameters) runs PyTorch's
// CPU algorithm on device memory, through the borrowed path, with a CPU
// generator seeded from one block of the openreg generator's stream. The
// numbers therefore follow openreg's seed and state: torch.manual_seed,
// get_rng_state/set_rng_state and generator= objects on openreg reproduce them.
void seeded_cpu_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                       torch::jit::Stack* stack) {
  const auto& args = op.schema().arguments();
  const size_t first = stack->size() - args.size();
  std::optional<c10::Device> device = check_same_device(op, *stack);
  TORCH_CHECK(device.has_value(), op.schema().name(), ": expected an openreg tensor argument");
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& type = args[i].real_type();
    if (type->kind() != c10::TypeKind::OptionalType ||
        type->castRaw<c10::OptionalType>()->getElementType()->kind() !=
            c10::TypeKind::GeneratorType) {
      continue;
    }
    c10::IValue& slot = (*stack)[first + i];
    std::optional<at::Generator> gen;
    if (!slot.isNone()) gen = slot.toGenerator();
    Draw draw = reserve(*device, 1, gen);  // one block, in launch order
    uint32_t r[4];
    draw(0, r);
    uint64_t seed = (uint64_t(r[0]) << 32) | r[1];
    slot = c10::IValue(at::make_generator<at::CPUGeneratorImpl>(seed));
  }
  // Without a Meta kernel (binomial, _sample_dirichlet) the borrowed path
  // cannot size the results: PyTorch's CPU fallback copies the operands to
  // the CPU and back instead, with the same seeded generator.
  if (!op.hasKernelForDispatchKey(c10::DispatchKey::Meta))
    return at::native::cpu_fallback(op, stack);
  borrowed_kernel(op, keys, stack);
}
// LITERALINCLUDE END: RANDOM_SEEDED_CPU_KERNEL

}  // namespace at::native::openreg

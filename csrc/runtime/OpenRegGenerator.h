// OpenRegGenerator.h: the per-device random number generator (Philox seed + offset).
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

namespace c10::openreg {

// Like CUDA's generator: state is a seed and an offset into the Philox
// stream. A kernel reserves offsets at launch, in stream order, so results
// do not depend on when the device runs it.
// LITERALINCLUDE START: GENERATOR_IMPL_CLASS
class OpenRegGeneratorImpl final : public c10::GeneratorImpl {
 public:
  explicit OpenRegGeneratorImpl(DeviceIndex device_index);

  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override { return seed_; }
  uint64_t seed() override;
  void set_offset(uint64_t offset) override { offset_ = offset; }
  uint64_t get_offset() const override { return offset_; }
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;

  // Reserves `increment` numbers and returns {seed, first offset}.
  std::pair<uint64_t, uint64_t> reserve(uint64_t increment);

  static DeviceType device_type() { return DeviceType::PrivateUse1; }

 private:
  OpenRegGeneratorImpl* clone_impl() const override;
  uint64_t seed_;
  uint64_t offset_ = 0;
};
// LITERALINCLUDE END: GENERATOR_IMPL_CLASS

const at::Generator& default_generator(DeviceIndex device);
at::Generator new_generator(DeviceIndex device);

}  // namespace c10::openreg

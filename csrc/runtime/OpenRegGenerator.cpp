// OpenRegGenerator.cpp: generator state, its serialization, and the per-device defaults.
#include "OpenRegGenerator.h"

#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/CallOnce.h>

#include <cstring>
#include <random>
#include <vector>

#include "OpenRegFunctions.h"

namespace c10::openreg {

namespace {
constexpr uint64_t kDefaultSeed = 67280421310721ull;  // matches CPU's default_rng_seed_val
constexpr size_t kStateBytes = 2 * sizeof(uint64_t);
}  // namespace

OpenRegGeneratorImpl::OpenRegGeneratorImpl(DeviceIndex device_index)
    : c10::GeneratorImpl(Device(DeviceType::PrivateUse1, device_index),
                         DispatchKeySet(DispatchKey::PrivateUse1)),
      seed_(kDefaultSeed) {}

void OpenRegGeneratorImpl::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

uint64_t OpenRegGeneratorImpl::seed() {
  uint64_t fresh = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  set_current_seed(fresh);
  return fresh;
}

// LITERALINCLUDE START: GENERATOR_STATE
c10::intrusive_ptr<c10::TensorImpl> OpenRegGeneratorImpl::get_state() const {
  // The state travels as a CPU uint8 tensor, as for every PyTorch generator.
  at::Tensor state = at::empty({static_cast<int64_t>(kStateBytes)}, at::kByte);
  uint64_t words[2] = {seed_, offset_};
  std::memcpy(state.data_ptr(), words, kStateBytes);
  return state.getIntrusivePtr();
}

void OpenRegGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  TORCH_CHECK(new_state.dtype() == caffe2::TypeMeta::Make<uint8_t>() &&
                  new_state.device().is_cpu() && new_state.numel() == kStateBytes,
              "an openreg generator state is a CPU uint8 tensor of ", kStateBytes, " bytes, got ",
              new_state.numel(), " elements of ", new_state.dtype());
  uint64_t words[2];
  std::memcpy(words, new_state.data(), kStateBytes);
  seed_ = words[0];
  offset_ = words[1];
}
// LITERALINCLUDE END: GENERATOR_STATE

std::pair<uint64_t, uint64_t> OpenRegGeneratorImpl::reserve(uint64_t increment) {
  uint64_t first = offset_;
  offset_ += increment;
  return {seed_, first};
}

OpenRegGeneratorImpl* OpenRegGeneratorImpl::clone_impl() const {
  auto* copy = new OpenRegGeneratorImpl(device().index());
  copy->seed_ = seed_;
  copy->offset_ = offset_;
  return copy;
}

// LITERALINCLUDE START: GENERATOR_DEFAULTS
const at::Generator& default_generator(DeviceIndex device) {
  static std::vector<c10::once_flag> once(device_count());
  static std::vector<at::Generator> generators(device_count());
  if (device < 0) device = current_device();
  check_device_index(device);
  c10::call_once(once[device], [device] {
    generators[device] = at::make_generator<OpenRegGeneratorImpl>(device);
  });
  return generators[device];
}

at::Generator new_generator(DeviceIndex device) {
  if (device < 0) device = current_device();
  check_device_index(device);
  return at::make_generator<OpenRegGeneratorImpl>(device);
}
// LITERALINCLUDE END: GENERATOR_DEFAULTS

}  // namespace c10::openreg

// OpenRegHostAllocator.h: the caching allocator of pinned host memory (Tensor.pin_memory()).
#pragma once

#include <ATen/core/CachingHostAllocator.h>

namespace c10::openreg {

// What Tensor.pin_memory() and the hooks' getPinnedMemoryAllocator() return.
at::HostAllocator* host_allocator();

}  // namespace c10::openreg

// memory.cpp: device memory the host cannot touch, pinned host memory, pointer attributes.
#include "internal.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace openreg {

namespace {
constexpr size_t kAlignment = 512;  // like cudaMalloc, at least 256-byte aligned
constexpr size_t kPage = 4096;
constexpr size_t kReleaseAtLeast = 64 << 10;  // return pages of freed ranges this large

std::once_flag devices_once;
std::vector<DeviceMemory*>* devices = nullptr;  // leaked: workers may outlive static destructors

// LITERALINCLUDE START: DRIVER_MEMORY_DUAL_MAP
void map_device(DeviceMemory& m, int index) {
  mark_started();
  m.capacity = config().memory_per_device;
  std::string name = "openreg-device-" + std::to_string(config().physical[index]);
  m.fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (m.fd < 0 || ftruncate(m.fd, static_cast<off_t>(m.capacity)) != 0) {
    m.capacity = 0;
    return;
  }
  void* dev = mmap(nullptr, m.capacity, PROT_NONE, MAP_SHARED | MAP_NORESERVE, m.fd, 0);
  void* ker =
      mmap(nullptr, m.capacity, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, m.fd, 0);
  if (dev == MAP_FAILED || ker == MAP_FAILED) {
    m.capacity = 0;
    return;
  }
  m.device_base = static_cast<char*>(dev);
  m.kernel_base = static_cast<char*>(ker);
  m.free_ranges[0] = m.capacity;
}
// LITERALINCLUDE END: DRIVER_MEMORY_DUAL_MAP

std::vector<DeviceMemory*>& all_devices() {
  std::call_once(devices_once, [] {
    devices = new std::vector<DeviceMemory*>();
    for (int i = 0; i < config().device_count; ++i) {
      devices->push_back(new DeviceMemory());
      map_device(*devices->back(), i);
    }
  });
  return *devices;
}

// Give the pages of a freed range back to the kernel, as a real driver would.
void release_pages(DeviceMemory& m, size_t offset, size_t size) {
  if (size < kReleaseAtLeast) return;
  size_t begin = (offset + kPage - 1) & ~(kPage - 1);
  size_t end = (offset + size) & ~(kPage - 1);
  if (end > begin) {
    fallocate(m.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(begin),
              static_cast<off_t>(end - begin));
  }
}

std::mutex pinned_mu;
std::map<uintptr_t, size_t>* pinned = new std::map<uintptr_t, size_t>();

bool find_pinned(const void* p, uintptr_t* base, size_t* size) {
  auto addr = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(pinned_mu);
  auto it = pinned->upper_bound(addr);
  if (it == pinned->begin()) return false;
  --it;
  if (addr >= it->first + it->second) return false;
  *base = it->first;
  *size = it->second;
  return true;
}
}  // namespace

DeviceMemory& device_memory(int device) { return *all_devices()[device]; }

int device_of(const void* p) {
  auto& devs = all_devices();
  for (size_t i = 0; i < devs.size(); ++i) {
    if (devs[i]->contains(p)) return static_cast<int>(i);
  }
  return imported_device_of(p);
}

char* kernel_address(const void* p) {
  for (DeviceMemory* m : all_devices()) {
    if (m->contains(p)) return m->to_kernel(p);
  }
  return imported_to_kernel(p);
}

orError_t check_device_range(const void* p, size_t count, const char* what) {
  int dev = device_of(p);
  if (dev < 0) return fail(orErrorInvalidValue, std::string(what) + " is not device memory");
  DeviceMemory& m = device_memory(dev);
  if (!m.contains(p)) return check_imported_range(p, count, what);
  size_t offset = static_cast<size_t>(static_cast<const char*>(p) - m.device_base);
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.allocations.upper_bound(offset);
  if (it == m.allocations.begin()) {
    return fail(orErrorInvalidDevicePointer,
                std::string(what) + " is not inside a live allocation");
  }
  --it;
  if (offset + count > it->first + it->second) {
    return fail(orErrorInvalidValue,
                std::string(what) + " range runs past the end of its allocation");
  }
  return ok();
}

bool is_pinned_host(const void* p, size_t count) {
  uintptr_t base;
  size_t size;
  if (!find_pinned(p, &base, &size)) return false;
  return reinterpret_cast<uintptr_t>(p) + count <= base + size;
}

}  // namespace openreg

using namespace openreg;

extern "C" {

orError_t orMalloc(void** dev_ptr, size_t size) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (dev_ptr == nullptr) return fail(orErrorInvalidValue, "orMalloc: dev_ptr is NULL");
  *dev_ptr = nullptr;
  if (size == 0) return ok();
  int device = current_device();
  if (orError_t err = check_device(device)) return err;
  DeviceMemory& m = device_memory(device);
  if (m.capacity == 0) return fail(orErrorInitializationError, "device memory could not be mapped");
  if (fault_due(orFaultAlloc)) {
    return fail(orErrorMemoryAllocation, "injected fault: device " + std::to_string(device) +
                                             " refused an allocation of " + std::to_string(size) +
                                             " bytes");
  }
  size_t want = (size + kAlignment - 1) & ~(kAlignment - 1);
  std::lock_guard<std::mutex> lock(m.mu);
  for (auto it = m.free_ranges.begin(); it != m.free_ranges.end(); ++it) {
    if (it->second < want) continue;
    size_t offset = it->first;
    size_t rest = it->second - want;
    m.free_ranges.erase(it);
    if (rest > 0) m.free_ranges[offset + want] = rest;
    m.allocations[offset] = want;
    m.used += want;
    *dev_ptr = m.device_base + offset;
    return ok();
  }
  return fail(orErrorMemoryAllocation, "device " + std::to_string(device) + " cannot allocate " +
                                           std::to_string(size) +
                                           " bytes: " + std::to_string(m.capacity - m.used) +
                                           " of " + std::to_string(m.capacity) + " bytes free");
}

orError_t orFree(void* dev_ptr) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (dev_ptr == nullptr) return ok();
  int device = device_of(dev_ptr);
  if (device < 0) return fail(orErrorInvalidDevicePointer, "orFree: pointer is not device memory");
  // Like cudaFree: wait until no queued work can still use the memory.
  if (orError_t err = synchronize_device(device)) return err;
  DeviceMemory& m = device_memory(device);
  size_t offset = static_cast<size_t>(static_cast<char*>(dev_ptr) - m.device_base);
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.allocations.find(offset);
  if (it == m.allocations.end()) {
    return fail(orErrorInvalidDevicePointer,
                "orFree: pointer is not the start of a live allocation");
  }
  size_t size = it->second;
  m.allocations.erase(it);
  m.used -= size;
  // Coalesce with the free neighbours on both sides.
  auto next = m.free_ranges.lower_bound(offset);
  if (next != m.free_ranges.end() && next->first == offset + size) {
    size += next->second;
    next = m.free_ranges.erase(next);
  }
  if (next != m.free_ranges.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      size += prev->second;
      m.free_ranges.erase(prev);
    }
  }
  m.free_ranges[offset] = size;
  release_pages(m, offset, size);
  return ok();
}

orError_t orMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (free_bytes == nullptr || total_bytes == nullptr) {
    return fail(orErrorInvalidValue, "orMemGetInfo: NULL output");
  }
  int device = current_device();
  if (orError_t err = check_device(device)) return err;
  DeviceMemory& m = device_memory(device);
  std::lock_guard<std::mutex> lock(m.mu);
  *total_bytes = m.capacity;
  *free_bytes = m.capacity - m.used;
  return ok();
}

orError_t orMallocHost(void** host_ptr, size_t size) {
  if (host_ptr == nullptr) return fail(orErrorInvalidValue, "orMallocHost: host_ptr is NULL");
  *host_ptr = nullptr;
  if (size == 0) return ok();
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return fail(orErrorMemoryAllocation, "orMallocHost: cannot map " + std::to_string(size) +
                                             " bytes: " + std::strerror(errno));
  }
  std::lock_guard<std::mutex> lock(pinned_mu);
  (*pinned)[reinterpret_cast<uintptr_t>(p)] = size;
  *host_ptr = p;
  return ok();
}

orError_t orFreeHost(void* host_ptr) {
  if (host_ptr == nullptr) return ok();
  size_t size;
  {
    std::lock_guard<std::mutex> lock(pinned_mu);
    auto it = pinned->find(reinterpret_cast<uintptr_t>(host_ptr));
    if (it == pinned->end()) {
      return fail(orErrorInvalidValue, "orFreeHost: pointer was not returned by orMallocHost");
    }
    size = it->second;
    pinned->erase(it);
  }
  munmap(host_ptr, size);
  return ok();
}

orError_t orPointerGetAttributes(orPointerAttributes* attr, const void* ptr) {
  if (attr == nullptr) return fail(orErrorInvalidValue, "orPointerGetAttributes: attr is NULL");
  *attr = orPointerAttributes{orMemoryTypeUnregistered, -1, nullptr, 0};
  int device = device_of(ptr);
  if (device >= 0) {
    DeviceMemory& m = device_memory(device);
    size_t offset = static_cast<size_t>(static_cast<const char*>(ptr) - m.device_base);
    std::lock_guard<std::mutex> lock(m.mu);
    auto it = m.allocations.upper_bound(offset);
    if (it != m.allocations.begin()) {
      --it;
      if (offset < it->first + it->second) {
        *attr =
            orPointerAttributes{orMemoryTypeDevice, device, m.device_base + it->first, it->second};
      }
    }
    return ok();
  }
  uintptr_t base;
  size_t size;
  if (find_pinned(ptr, &base, &size)) {
    *attr = orPointerAttributes{orMemoryTypeHost, -1, reinterpret_cast<void*>(base), size};
  }
  return ok();
}

}  // extern "C"

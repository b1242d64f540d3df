// MemoryBindings.cpp: torch.openreg.memory's functions: snapshots, history, fraction, pinned stats.
#include "../Bindings.h"

#include <runtime/OpenRegDeviceAllocator.h>
#include <runtime/OpenRegHostAllocator.h>

namespace torch_openreg {
namespace {

// LITERALINCLUDE START: MEMORY_BINDINGS_SNAPSHOT
py::dict stat_dict(const c10::CachingAllocator::Stat& s) {
  py::dict d;
  d["current"] = s.current;
  d["peak"] = s.peak;
  d["allocated"] = s.allocated;
  d["freed"] = s.freed;
  return d;
}

// The allocator's state in the format of torch.cuda.memory._snapshot(), which
// PyTorch's memory visualizer (torch.cuda._memory_viz) reads.
py::dict memory_snapshot() {
  auto snap = c10::openreg::device_allocator()->snapshot();
  py::list segments;
  for (const auto& seg : snap.segments) {
    py::list blocks;
    for (const auto& b : seg.blocks) {
      py::dict block;
      block["address"] = b.address;
      block["size"] = b.size;
      block["requested_size"] = b.requested_size;
      block["state"] = b.state;
      block["frames"] = py::list();
      blocks.append(block);
    }
    py::dict d;
    d["device"] = static_cast<int>(seg.device);
    d["address"] = seg.address;
    d["total_size"] = seg.total_size;
    d["allocated_size"] = seg.allocated_size;
    d["active_size"] = seg.active_size;
    d["requested_size"] = seg.requested_size;
    d["stream"] = seg.stream;
    d["segment_type"] = seg.is_large ? "large" : "small";
    d["segment_pool_id"] = py::make_tuple(0, 0);
    d["is_expandable"] = false;
    d["frames"] = py::list();
    d["blocks"] = blocks;
    segments.append(d);
  }
  py::list traces;
  for (const auto& device_trace : snap.device_traces) {
    py::list entries;
    for (const auto& e : device_trace) {
      py::dict entry;
      entry["action"] = e.action;
      entry["addr"] = e.address;
      entry["size"] = e.size;
      entry["stream"] = e.stream;
      entry["time_us"] = e.time_us;
      entry["frames"] = py::list();
      entries.append(entry);
    }
    traces.append(entries);
  }
  py::dict result;
  result["segments"] = segments;
  result["device_traces"] = traces;
  return result;
}
// LITERALINCLUDE END: MEMORY_BINDINGS_SNAPSHOT

py::dict host_memory_stats() {
  at::HostStats stats = c10::openreg::host_allocator()->get_stats();
  py::dict d;
  d["active_requests"] = stat_dict(stats.active_requests);
  d["active_bytes"] = stat_dict(stats.active_bytes);
  d["allocations"] = stat_dict(stats.allocations);
  d["allocated_bytes"] = stat_dict(stats.allocated_bytes);
  d["num_host_alloc"] = stats.num_host_alloc;
  d["num_host_free"] = stats.num_host_free;
  return d;
}

void bind_memory(py::module_& m) {
  auto* allocator = c10::openreg::device_allocator();
  m.def("_memory_snapshot", translating([] { return memory_snapshot(); }));
  m.def("_record_memory_history", translating<bool, size_t>([allocator](bool on, size_t max) {
          allocator->recordHistory(on, max);
        }));
  m.def("_set_memory_fraction", translating<double, int>([allocator](double f, int device) {
          allocator->setMemoryFraction(f, static_cast<c10::DeviceIndex>(device));
        }));
  m.def("_get_memory_fraction", translating<int>([allocator](int device) {
          return allocator->getMemoryFraction(static_cast<c10::DeviceIndex>(device));
        }));
  m.def("_host_memory_stats", translating([] { return host_memory_stats(); }));
  m.def("_host_reset_peak_stats",
        translating([] { c10::openreg::host_allocator()->reset_peak_stats(); }));
}

OPENREG_BINDINGS(memory, bind_memory);

}  // namespace
}  // namespace torch_openreg

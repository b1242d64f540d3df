"""Device memory from a user's side: statistics, the cache, snapshots, limits, pinned memory."""

import torch
import torch.cuda._memory_viz as memory_viz

# LITERALINCLUDE START: EXAMPLE_MEMORY_STATS
x = torch.empty(1024, 1024, device="openreg")  # 4 MiB
print("allocated:", torch.openreg.memory_allocated(), "reserved:", torch.openreg.memory_reserved())
del x
print("after del: allocated", torch.openreg.memory_allocated(),
      "reserved", torch.openreg.memory_reserved(), "(cached for reuse)")
torch.openreg.empty_cache()
print("after empty_cache: reserved", torch.openreg.memory_reserved())
# LITERALINCLUDE END: EXAMPLE_MEMORY_STATS

# LITERALINCLUDE START: EXAMPLE_MEMORY_SNAPSHOT
torch.openreg.memory._record_memory_history(max_entries=10000)
a = torch.empty(256, device="openreg")
b = torch.empty(3 << 20, dtype=torch.uint8, device="openreg")
del a
snapshot = torch.openreg.memory._snapshot()  # the format of torch.cuda.memory._snapshot()
torch.openreg.memory._record_memory_history(enabled=None)
print(memory_viz.segsum(snapshot).split("Legend")[0].strip())
# LITERALINCLUDE END: EXAMPLE_MEMORY_SNAPSHOT

# LITERALINCLUDE START: EXAMPLE_MEMORY_OOM
try:
    torch.empty(1 << 40, device="openreg")
except torch.OutOfMemoryError as error:
    print("OutOfMemoryError:", error)
print("OOMs so far:", torch.openreg.memory_stats()["num_ooms"])
# LITERALINCLUDE END: EXAMPLE_MEMORY_OOM

# LITERALINCLUDE START: EXAMPLE_MEMORY_PINNED
host = torch.arange(1 << 20, dtype=torch.float32).pin_memory()
device = torch.empty(1 << 20, device="openreg")
device.copy_(host, non_blocking=True)  # returns at once; the stream orders the rest
print("pinned:", host.is_pinned(), "copy finished yet:", torch.openreg.current_stream().query())
print("sum on the device:", device.sum().item())
print("pinned blocks cached:", torch.openreg.host_memory_stats()["allocations"]["current"])
# LITERALINCLUDE END: EXAMPLE_MEMORY_PINNED

"""Profiling openreg: the Kineto trace, the legacy profiler's device times, memory events."""

import json
import os
import tempfile
import time
import warnings

import torch
import torch.cuda._memory_viz
from torch.profiler import ProfilerActivity, profile

torch.manual_seed(0)

# LITERALINCLUDE START: EXAMPLE_PROFILING_KINETO
x = torch.randn(256, 256, device="openreg")
host = torch.randn(256, 256).pin_memory()
side = torch.openreg.Stream()
side.wait_stream(torch.openreg.current_stream())

with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
    for _ in range(3):
        with torch.openreg.stream(side):  # a copy in on the side stream...
            y = host.to("openreg", non_blocking=True)
        z = x @ x  # ...while the default stream multiplies
        torch.openreg.current_stream().wait_stream(side)
        (z + y).sum().item()

print(prof.key_averages().table(sort_by="device_time_total", row_limit=6,
                                max_name_column_width=24))
path = os.path.join(tempfile.mkdtemp(), "trace.json")
prof.export_chrome_trace(path)
with open(path) as f:
    events = json.load(f)["traceEvents"]
rows = {(e["pid"], e["tid"]) for e in events if e.get("cat") in ("kernel", "gpu_memcpy")}
print("device rows (pid = openreg device, tid = stream):", sorted(rows))
# LITERALINCLUDE END: EXAMPLE_PROFILING_KINETO

# LITERALINCLUDE START: EXAMPLE_PROFILING_LEGACY
a = torch.randn(512, 512, device="openreg")
torch.openreg.synchronize()
with torch.autograd.profiler.profile(use_device="openreg") as legacy:
    start = time.perf_counter()
    for _ in range(5):
        a = torch.mm(a, a) / 512
    torch.openreg.synchronize()
    wall_us = (time.perf_counter() - start) * 1e6
mm = [e for e in legacy.function_events if e.name == "aten::mm"]
device_us = sum(e.device_time for e in mm)
print(f"aten::mm: {len(mm)} calls, device time {device_us:.0f} us "
      f"of {wall_us:.0f} us wall clock ({device_us / wall_us:.0%})")
# LITERALINCLUDE END: EXAMPLE_PROFILING_LEGACY

# LITERALINCLUDE START: EXAMPLE_PROFILING_MEMORY
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1],
             profile_memory=True, record_shapes=True, with_stack=True) as mem:
    t = torch.empty(1024, 1024, device="openreg")  # 4 MiB
    u = t.add_(1).mul(2)  # another 4 MiB
    del t, u
for e in mem.key_averages():
    if e.key.startswith("aten::") and e.self_device_memory_usage:
        print(f"{e.key:12} allocated {e.self_device_memory_usage / 2**20:.0f} MiB on openreg")
timeline = os.path.join(tempfile.mkdtemp(), "memory.json")
with warnings.catch_warnings():  # torch 2.13 deprecates it in favour of memory snapshots
    warnings.simplefilter("ignore", FutureWarning)
    mem.export_memory_timeline(timeline, device="openreg:0")
with open(timeline) as f:
    times, sizes = json.load(f)
print(f"memory timeline: {len(times)} points, peak {max(map(sum, sizes)) / 2**20:.0f} MiB")

# The allocator's own history, in the snapshot format of PyTorch's memory visualizer.
torch.openreg.memory._record_memory_history()
v = torch.empty(1 << 20, device="openreg")
del v
snapshot = torch.openreg.memory._snapshot()
torch.openreg.memory._record_memory_history(None)
page = torch.cuda._memory_viz.trace_plot(snapshot)
print("snapshot:", len(snapshot["device_traces"][0]), "events on openreg:0,",
      f"visualizer page of {len(page) // 1024} KiB")
# LITERALINCLUDE END: EXAMPLE_PROFILING_MEMORY

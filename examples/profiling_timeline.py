"""Profiling two streams: copies on one, kernels on the other, overlapping; optionally drawn.

    python examples/profiling_timeline.py              # prints what the trace shows
    python examples/profiling_timeline.py out.png      # also draws it (needs matplotlib)
"""

import json
import os
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

# LITERALINCLUDE START: EXAMPLE_PROFILING_TIMELINE_TRACE
weights = torch.randn(512, 512, device="openreg")
batches = [torch.randn(4096, 512).pin_memory() for _ in range(4)]  # 8 MiB each
copies = torch.openreg.Stream()
ready = []

with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
    with torch.openreg.stream(copies):  # all copies in, on their own stream
        for batch in batches:
            ready.append((batch.to("openreg", non_blocking=True), torch.openreg.Event()))
            ready[-1][1].record()
    results = []
    for x, event in ready:  # the default stream computes each batch once it has arrived
        torch.openreg.current_stream().wait_event(event)
        x.record_stream(torch.openreg.current_stream())
        results.append((x @ weights).relu().sum())
    torch.openreg.synchronize()

path = os.path.join(tempfile.mkdtemp(), "trace.json")
prof.export_chrome_trace(path)
with open(path) as f:
    events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
# LITERALINCLUDE END: EXAMPLE_PROFILING_TIMELINE_TRACE

device = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy")]
main_tid = next(e["tid"] for e in events if e.get("cat") == "cpu_op" and e["name"] == "aten::mm")
cpu = [e for e in events if e.get("cat") == "cpu_op" and e["tid"] == main_tid]
rows = {"CPU thread": cpu}
for e in sorted(device, key=lambda e: e["tid"]):
    rows.setdefault(f"openreg:{e['pid']} stream {e['tid']}", []).append(e)


def overlap(a, b):
    return min(a["ts"] + a["dur"], b["ts"] + b["dur"]) - max(a["ts"], b["ts"])


stream_rows = [r for r in rows if r.startswith("openreg")]
pairs = sum(overlap(a, b) > 0 for a in rows[stream_rows[0]] for b in rows[stream_rows[1]])
print("rows:", list(rows))
print("copies:", sum(e["cat"] == "gpu_memcpy" for e in device),
      "kernels:", sum(e["cat"] == "kernel" for e in device))
print("a copy and a kernel ran at the same time:", pairs > 0)


def draw(rows: dict, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    origin = min(e["ts"] for row in rows.values() for e in row)
    end = max(e["ts"] + e["dur"] for row in rows.values() for e in row)
    least = (end - origin) / 1000 / 400  # so that microsecond-long operators stay visible
    colors = {"cpu_op": "#9ab", "kernel": "#d62", "gpu_memcpy": "#27b"}
    fig, ax = plt.subplots(figsize=(9, 2.6), dpi=110)
    for y, (_, row) in enumerate(reversed(list(rows.items()))):
        spans = [((e["ts"] - origin) / 1000, max(e["dur"] / 1000, least)) for e in row]
        ax.broken_barh(spans, (y - 0.35, 0.7), facecolors=[colors[e["cat"]] for e in row],
                       edgecolor="white", linewidth=0.3)
    ax.set_yticks(range(len(rows)), list(reversed(list(rows))))
    ax.set_xlabel("milliseconds since the first event")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colors.values()]
    ax.legend(handles, ["CPU operator", "kernel", "copy"], loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out)


if len(sys.argv) > 1:
    draw(rows, sys.argv[1])

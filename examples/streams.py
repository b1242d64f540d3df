"""Streams and events: overlapping work, ordering it, and timing it."""

import torch

# LITERALINCLUDE START: EXAMPLE_STREAMS
x = torch.randn(512, 512, device="openreg")
side = torch.openreg.Stream()
side.wait_stream(torch.openreg.current_stream())  # x is produced on the default stream

start = torch.openreg.Event(enable_timing=True)
end = torch.openreg.Event(enable_timing=True)
with torch.openreg.stream(side):
    start.record()
    y = x @ x  # queued on the side stream
    end.record()
# y was allocated on the side stream and is used below on the default one: record the stream
# that uses it, so its memory is not reused before the default stream's work on it is done.
y.record_stream(torch.openreg.current_stream())

torch.openreg.current_stream().wait_event(end)  # later default-stream work sees y
z = y.sum()
end.synchronize()
print("side stream:", side.stream_id, "priority", side.priority)
print(f"matmul on the side stream took {start.elapsed_time(end):.2f} ms")
print("result matches the CPU:", torch.allclose(z.cpu(), (x.cpu() @ x.cpu()).sum(), rtol=1e-4))
# LITERALINCLUDE END: EXAMPLE_STREAMS

"""Porting from CUDA: the CUDA habits of a training script, written for any accelerator."""

import torch
import torch.distributed as dist

# LITERALINCLUDE START: EXAMPLE_PORTING_STREAMS_EVENTS_GRAPHS
# torch.cuda.Stream, Event and CUDAGraph become torch.openreg.Stream, Event and
# torch.accelerator.Graph; the calls on them keep their names.
weight = torch.randn(256, 256, device="openreg")
x = torch.randn(256, 256, device="openreg")
side = torch.openreg.Stream()
side.wait_stream(torch.openreg.current_stream())  # weight and x come from the default stream
start = torch.openreg.Event(enable_timing=True)
end = torch.openreg.Event(enable_timing=True)
with torch.openreg.stream(side):
    start.record()
    y = x @ weight
    end.record()
torch.openreg.current_stream().wait_event(end)
y.record_stream(torch.openreg.current_stream())
print("side stream result matches the CPU:", torch.allclose(y.cpu(), x.cpu() @ weight.cpu()))
end.synchronize()
print("event timing works:", start.elapsed_time(end) >= 0)

graph = torch.accelerator.Graph()
with side, graph:  # capture on a side stream, as with torch.cuda.graph
    y.copy_(y @ weight / 256)
before = y.cpu()
graph.replay()
torch.accelerator.synchronize()
print("one replay applied the step once:", torch.allclose(y.cpu(), before @ weight.cpu() / 256))
# LITERALINCLUDE END: EXAMPLE_PORTING_STREAMS_EVENTS_GRAPHS

# LITERALINCLUDE START: EXAMPLE_PORTING_DEVICE_GENERIC
# Where CUDA code says "cuda", ask torch.accelerator which device this machine has.
device = torch.accelerator.current_accelerator()
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8))
model[2].weight = model[0].weight  # tied weights
first = model[0].weight
model.to(device)
print("Module.to kept the Parameter objects:", model[0].weight is first)
print("tied weights stay tied:", model[2].weight is model[0].weight)

batch = torch.randn(4, 8).pin_memory()  # pinned for the current accelerator
print("pinned:", batch.is_pinned())
batch = batch.to(device, non_blocking=True)  # queued; ordered before what follows on the stream
with torch.autocast(device.type, dtype=torch.bfloat16):  # not torch.cuda.amp.autocast
    out = model(batch)
print("autocast dtype:", out.dtype)
torch.accelerator.synchronize()  # not torch.cuda.synchronize
print("default collective backend:", dist.get_default_backend_for_device(device))
# LITERALINCLUDE END: EXAMPLE_PORTING_DEVICE_GENERIC

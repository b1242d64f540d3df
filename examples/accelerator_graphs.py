"""torch.accelerator.Graph on openreg: capture a step once, replay it cheaply."""

import time

import torch

# LITERALINCLUDE START: EXAMPLE_GRAPH
weight = torch.randn(64, 64, device="openreg")
state = torch.randn(64, 64, device="openreg")
stream = torch.Stream(device="openreg")
stream.wait_stream(torch.accelerator.current_stream())  # inputs are made on the default stream

graph = torch.accelerator.Graph()
with stream, graph:  # captured: nothing runs yet
    for _ in range(10):
        state.copy_(state @ weight / 64 + state * 0.5)

expected = state.cpu()
for _ in range(10):
    expected = expected @ weight.cpu() / 64 + expected * 0.5

start = time.perf_counter()
graph.replay()  # one launch for the 50 captured kernels and copies
torch.accelerator.synchronize()
print(f"replayed {10} steps in {(time.perf_counter() - start) * 1e3:.2f} ms")
print("matches the CPU:", torch.allclose(state.cpu(), expected, atol=1e-5))
# LITERALINCLUDE END: EXAMPLE_GRAPH

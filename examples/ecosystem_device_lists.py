"""Libraries that list devices by name: safetensors and accelerate on openreg, the paths that
work today, each next to the CPU.
"""

import os
import tempfile

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file


def make_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))


# LITERALINCLUDE START: EXAMPLE_ECOSYSTEM_SAFETENSORS
source = make_model().to("openreg")
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "model.safetensors")
    save_file(source.state_dict(), path)  # copies each tensor to the CPU to write it
    try:
        load_file(path, device="openreg")
    except SafetensorError as error:
        print("load_file(device='openreg'):", error)
    state = {name: t.to("openreg") for name, t in load_file(path).items()}  # CPU, then moved
    by_index = load_file(path, device=1)  # a bare index is torch's: the accelerator's device 1
print("loaded to the CPU, then moved:", sorted({str(t.device) for t in state.values()}))
print("loaded by index:", sorted({str(t.device) for t in by_index.values()}))
print("the weights round-trip:", all(torch.equal(state[n].cpu(), t.cpu())
                                     for n, t in source.state_dict().items()))
# LITERALINCLUDE END: EXAMPLE_ECOSYSTEM_SAFETENSORS


# LITERALINCLUDE START: EXAMPLE_ECOSYSTEM_ACCELERATE
accelerator = Accelerator()
print("Accelerator().device:", accelerator.device)
prepared = accelerator.prepare(make_model().to("openreg"))
print("prepare() moved the model to:", next(prepared.parameters()).device)


def fit(device):
    """accelerate's loop, with the caller placing the model and the batches."""
    accelerator = Accelerator(device_placement=False)
    model = make_model().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model, optimizer = accelerator.prepare(model, optimizer)
    torch.manual_seed(1)
    for _ in range(3):
        inputs, targets = torch.randn(16, 8).to(device), torch.randint(0, 2, (16,)).to(device)
        loss = F.cross_entropy(model(inputs), targets)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    return model


cpu_model, model = fit("cpu"), fit("openreg")
print("device_placement=False trains on:", next(model.parameters()).device)
print("the same weights as the CPU's:", all(torch.allclose(a.cpu(), b, atol=1e-6)
                                            for a, b in zip(model.parameters(),
                                                            cpu_model.parameters())))
# LITERALINCLUDE END: EXAMPLE_ECOSYSTEM_ACCELERATE

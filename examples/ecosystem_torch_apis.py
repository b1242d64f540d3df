"""PyTorch's own libraries above the dispatcher on openreg, next to the CPU: torch.export,
torch.func, activation checkpointing and a DataLoader that pins its batches.
"""

import io

import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, jacrev, vmap
from torch.utils.checkpoint import checkpoint


def make_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.allclose(a.cpu(), b.cpu(), rtol=1e-5, atol=1e-6)


torch.manual_seed(1)
x = torch.randn(6, 8)
cpu_model = make_model()
model = make_model().to("openreg")
x_dev = x.to("openreg")

# LITERALINCLUDE START: EXAMPLE_ECOSYSTEM_EXPORT
exported = torch.export.export(model, (x_dev,))  # traced with openreg tensors
buffer = io.BytesIO()
torch.export.save(exported, buffer)  # weights are written through the CPU, tagged openreg
buffer.seek(0)
loaded = torch.export.load(buffer)
print("exported weights on:", sorted({str(t.device) for t in loaded.state_dict.values()}))
print("exported program equals the CPU model:", close(loaded.module()(x_dev), cpu_model(x)))
# LITERALINCLUDE END: EXAMPLE_ECOSYSTEM_EXPORT


# LITERALINCLUDE START: EXAMPLE_ECOSYSTEM_FUNC
def per_sample_grads(model, inputs):
    """One gradient per sample: grad of a functional call, vectorized over the batch by vmap."""
    params = {name: p.detach() for name, p in model.named_parameters()}

    def loss(params, sample):
        return functional_call(model, params, (sample.unsqueeze(0),)).square().sum()

    return vmap(grad(loss), in_dims=(None, 0))(params, inputs)


expected, grads = per_sample_grads(cpu_model, x), per_sample_grads(model, x_dev)
print("per-sample gradients equal the CPU's:", all(close(grads[n], expected[n]) for n in grads))
jacobian = jacrev(lambda v: torch.sin(v) * v)
print("jacrev equals the CPU's:", close(jacobian(x_dev[0]), jacobian(x[0])))
# LITERALINCLUDE END: EXAMPLE_ECOSYSTEM_FUNC

# LITERALINCLUDE START: EXAMPLE_ECOSYSTEM_CHECKPOINT
block = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.5)).to("openreg")
input_grads = []
for use_checkpoint in (True, False):
    leaf = x_dev.clone().requires_grad_()
    torch.openreg.manual_seed(7)  # the same dropout mask in both runs
    out = checkpoint(block, leaf, use_reentrant=False) if use_checkpoint else block(leaf)
    out.sum().backward()  # a checkpoint replays the block, and its dropout, here
    input_grads.append(leaf.grad)
print("checkpointed dropout replays the device's generator:",
      torch.equal(input_grads[0].cpu(), input_grads[1].cpu()))
cpu_leaf, leaf = x.clone().requires_grad_(), x_dev.clone().requires_grad_()
checkpoint(cpu_model, cpu_leaf, use_reentrant=False).sum().backward()
checkpoint(model, leaf, use_reentrant=False).sum().backward()
print("checkpointed gradients equal the CPU's:", close(leaf.grad, cpu_leaf.grad))
# LITERALINCLUDE END: EXAMPLE_ECOSYSTEM_CHECKPOINT


# LITERALINCLUDE START: EXAMPLE_ECOSYSTEM_DATALOADER
def fit(model, device, pin_memory):
    data = torch.utils.data.TensorDataset(torch.randn(32, 8), torch.randn(32, 4))
    loader = torch.utils.data.DataLoader(data, batch_size=8, num_workers=2,
                                         pin_memory=pin_memory)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    pinned = []
    for inputs, targets in loader:
        pinned.append(inputs.is_pinned())
        inputs = inputs.to(device, non_blocking=pin_memory)  # queued on the current stream
        targets = targets.to(device, non_blocking=pin_memory)
        F.mse_loss(model(inputs), targets).backward()
        optimizer.step()
        optimizer.zero_grad()
    return all(pinned)


torch.manual_seed(2)
fit(cpu_model, "cpu", pin_memory=False)
torch.manual_seed(2)
print("every batch pinned:", fit(model, "openreg", pin_memory=True))
print("trained weights equal the CPU's:",
      all(close(a, b) for a, b in zip(model.parameters(), cpu_model.parameters())))
# LITERALINCLUDE END: EXAMPLE_ECOSYSTEM_DATALOADER

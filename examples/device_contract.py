"""The device-module contract: PyTorch's own utilities, run on openreg through torch.openreg."""

import torch
import torch.utils.checkpoint

# LITERALINCLUDE START: EXAMPLE_DEVICE_CONTRACT
torch.manual_seed(0)  # seeds openreg too: torch calls torch.openreg.manual_seed_all
model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Dropout(0.5),
                            torch.nn.Linear(16, 1)).to("openreg")
x = torch.randn(8, 16, device="openreg", requires_grad=True)

# Checkpointing recomputes the forward in the backward pass; to draw the same dropout
# mask again it saves and restores the device's RNG state through torch.openreg.
state = torch.openreg.get_rng_state()
model(x).sum().backward()
plain = x.grad.clone()
for preserve in (True, False):
    x.grad = None
    torch.openreg.set_rng_state(state)
    out = torch.utils.checkpoint.checkpoint(model, x, use_reentrant=False,
                                            preserve_rng_state=preserve)
    out.sum().backward()
    print(f"checkpoint, preserve_rng_state={preserve}: same gradient:",
          torch.equal(x.grad.cpu(), plain.cpu()))

# fork_rng saves every device's generator and restores it on the way out.
with torch.random.fork_rng(devices=range(torch.openreg.device_count()), device_type="openreg"):
    inside = torch.rand(3, device="openreg:1")
after = torch.rand(3, device="openreg:1")
print("fork_rng restores openreg:1:", torch.equal(inside.cpu(), after.cpu()))

# torch.autocast asks the device module which dtypes it may run in.
with torch.autocast(device_type="openreg", dtype=torch.bfloat16):
    print("autocast:", model[0](x).dtype)

with torch.openreg.device_of(torch.ones(1, device="openreg:1")):
    print("device_of a tensor on openreg:1 -> current device", torch.openreg.current_device())
print("capability:", torch.openreg.get_device_capability(),
      "initialized:", torch.openreg.is_initialized())
# LITERALINCLUDE END: EXAMPLE_DEVICE_CONTRACT

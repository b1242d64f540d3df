"""Random numbers on openreg: seeding, reproducibility, per-device generators."""

import torch

# LITERALINCLUDE START: EXAMPLE_RANDOM
torch.openreg.manual_seed(2024)
a = torch.randn(3, device="openreg")
torch.openreg.manual_seed(2024)
b = torch.randn(3, device="openreg")
print("same seed, same numbers:", torch.equal(a.cpu(), b.cpu()))

g = torch.Generator(device="openreg:1").manual_seed(7)
print("a private generator on device 1:", torch.rand(2, device="openreg:1", generator=g).cpu())

torch.openreg.manual_seed_all(0)
state = torch.openreg.get_rng_state(1)  # a CPU uint8 tensor: seed and offset
torch.randn(1000, device="openreg:0")   # drawing on device 0 ...
print("device 1 untouched:", torch.equal(torch.openreg.get_rng_state(1), state))

with torch.random.fork_rng(devices=[0], device_type="openreg"):
    torch.openreg.manual_seed(123)  # changes inside the block only
print("initial seed after fork_rng:", torch.openreg.initial_seed())
# LITERALINCLUDE END: EXAMPLE_RANDOM

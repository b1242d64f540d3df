"""Devices: choosing a device, moving tensors between devices, and what a bad index says."""

import torch

# LITERALINCLUDE START: EXAMPLE_DEVICES
print("devices:", torch.openreg.device_count(), "current:", torch.openreg.current_device())
print("name:", torch.openreg.get_device_name(0))

a = torch.arange(4.0, device="openreg:0")
b = a.to("openreg:1")  # a peer copy between the two emulated devices
with torch.openreg.device(1):
    c = torch.ones(4, device="openreg")  # "openreg" means the current device: 1 here
print(b.device, c.device, (b + c).cpu())

try:
    torch.empty(1, device="openreg:99")
except RuntimeError as error:
    print("bad index:", error)

try:
    a + torch.ones(4)
except RuntimeError as error:
    print("mixed devices:", error)
# LITERALINCLUDE END: EXAMPLE_DEVICES

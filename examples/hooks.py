"""What the hooks give a user: each part reaches PrivateUse1HooksInterface through a public API."""

import torch

# LITERALINCLUDE START: EXAMPLE_HOOKS_DEVICES
# openreg is the accelerator because its name is registered; is_available() asks torch.openreg.
print("accelerator:", torch._C._get_accelerator(), "| available:", torch.accelerator.is_available())
# init: the device starts on first use, not at import.
print("initialized at import:", torch.openreg.is_initialized())
torch.empty(1, device="openreg")
print("initialized after a tensor:", torch.openreg.is_initialized())
# deviceCount, exchangeDevice, getCurrentDevice: what device-generic code calls.
print("devices:", torch._C._accelerator_hooks_device_count())
previous = torch._C._accelerator_hooks_exchange_device(1)
print("current device:", torch._C._accelerator_hooks_get_current_device(), "| was:", previous)
torch._C._accelerator_hooks_set_current_device(previous)
# LITERALINCLUDE END: EXAMPLE_HOOKS_DEVICES

# getNewGenerator: torch.Generator(device=...); getDefaultGenerator: draws without one.
g = torch.Generator(device="openreg:1").manual_seed(42)
mine = torch.randn(3, device="openreg:1", generator=g)
torch.openreg.manual_seed_all(42)
default = torch.randn(3, device="openreg:1")
print("explicit generator on", g.device, "| default draws the same numbers:",
      torch.equal(mine.cpu(), default.cpu()))

# LITERALINCLUDE START: EXAMPLE_HOOKS_MEMORY
# isPinnedPtr, getPinnedMemoryAllocator: pinned host memory for asynchronous copies.
host = torch.arange(4.0)
pinned = host.pin_memory()
print("pageable pinned:", host.is_pinned(), "| after pin_memory():", pinned.is_pinned())
# resizePrivateUse1Bytes: a device storage grows, and keeps its contents.
x = pinned.to("openreg", non_blocking=True)
storage = x.untyped_storage()
storage.resize_(64)
print("storage bytes:", storage.nbytes(), "| first values kept:",
      torch.tensor([], device="openreg").set_(storage, 0, (4,)).cpu().tolist())
# LITERALINCLUDE END: EXAMPLE_HOOKS_MEMORY

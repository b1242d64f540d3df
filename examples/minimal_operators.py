"""The minimal operator set at work: creating, viewing, copying, resizing, and the fallback."""

# LITERALINCLUDE START: MINIMAL_OPERATORS_EXAMPLE_IMPORTS
import torch
# LITERALINCLUDE END: MINIMAL_OPERATORS_EXAMPLE_IMPORTS

# LITERALINCLUDE START: EXAMPLE_TENSORS
x = torch.arange(6.0, device="openreg").reshape(2, 3)  # empty + a copy from the host
row = x[1]                                             # a view: no copy, same storage
row.mul_(10)
print(x.cpu())
print("view shares storage:", row.untyped_storage().data_ptr() == x.untyped_storage().data_ptr())

x.resize_(4, 3)                                        # storage grows on the device
print("resized:", tuple(x.shape), "first rows kept:", x[:2].cpu().tolist())

y = x.to("openreg:1", dtype=torch.float64)             # peer copy with a dtype change
print(y.device, y.dtype, y[0, 2].item())               # .item() is _local_scalar_dense

z = torch.sin(x[:2])                                   # no openreg kernel: the CPU fallback runs it
print(z.device, z.cpu())
# LITERALINCLUDE END: EXAMPLE_TENSORS

"""The device's kernel threads (docs/launching.md, "Threads of a kernel")."""

import torch

# LITERALINCLUDE START: EXAMPLE_KERNEL_THREADS
# By default the kernels get as many threads as PyTorch's own CPU loops.
print("kernel threads:", torch.openreg.get_kernel_threads(), "= torch.get_num_threads():",
      torch.get_num_threads())
x = torch.randn(1 << 20, device="openreg", generator=torch.Generator("openreg").manual_seed(0))
print("mean |x|:", round(x.abs().mean().item(), 2))  # 0.8 for a normal distribution

# A program whose host keeps computing on the CPU while the device works (a data pipeline on
# the host thread) gives the device one thread, so that the two do not fight for the cores.
torch.openreg.set_kernel_threads(1)
print("kernel threads:", torch.openreg.get_kernel_threads())
# LITERALINCLUDE END: EXAMPLE_KERNEL_THREADS

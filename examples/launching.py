"""Giving the device's kernels the machine's cores (docs/launching.md, "Threads of a kernel")."""

import os

import torch

# LITERALINCLUDE START: EXAMPLE_KERNEL_THREADS
# First thing in the program, before any CPU operator runs a parallel loop: this program's
# host thread only launches work, so its parallel loops get one thread, the kernels the cores.
torch.set_num_threads(1)
torch.openreg.set_kernel_threads(os.cpu_count() or 1)

x = torch.randn(1 << 20, device="openreg", generator=torch.Generator("openreg").manual_seed(0))
print("kernel threads:", torch.openreg.get_kernel_threads(), "= cores:", os.cpu_count())
print("mean |x|:", round(x.abs().mean().item(), 2))  # 0.8 for a normal distribution
# LITERALINCLUDE END: EXAMPLE_KERNEL_THREADS

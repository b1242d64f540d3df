"""Tools: tracing which operators run, and on which device, in a release build of PyTorch."""

import os
import subprocess
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# TORCH_SHOW_DISPATCH_TRACE=1 prints every dispatcher call, but only in builds
# of PyTorch compiled with debug assertions (or HAS_TORCH_SHOW_DISPATCH_TRACE):
# release wheels compile the trace out. Ask this build:
probe = "import torch; torch.ones(2, device='openreg') + 1"
run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                     env={**os.environ, "TORCH_SHOW_DISPATCH_TRACE": "1"})
traced = [line for line in run.stderr.splitlines() if "[call]" in line]
print(f"TORCH_SHOW_DISPATCH_TRACE in torch {torch.__version__}: {len(traced)} trace lines")


# LITERALINCLUDE START: EXAMPLE_DISPATCH_TRACE_MODE
class ShowOps(TorchDispatchMode):
    """Prints each ATen operator below autograd with the devices of its tensors."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        devices = sorted({str(a.device) for a in (*args, *kwargs.values())
                          if isinstance(a, torch.Tensor)})
        print(f"{str(func):32} {', '.join(devices)}")
        return func(*args, **kwargs)


x = torch.ones(2, 2, device="openreg", requires_grad=True)
with ShowOps():
    y = (x * 3).sin().sum()
    y.backward()
# LITERALINCLUDE END: EXAMPLE_DISPATCH_TRACE_MODE

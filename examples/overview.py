"""The emulated device is authentic: the host cannot touch device memory, and kernels run later."""

import subprocess
import sys
import time

import torch

# LITERALINCLUDE START: EXAMPLE_DEVICE_MEMORY_FAULT
# Reading a device tensor's memory from host code crashes, as on a real GPU.
# (Done in a child process, so this example survives to tell.)
probe = """
import ctypes, torch
t = torch.ones(4, device="openreg")
print(ctypes.c_float.from_address(t.data_ptr()).value)
"""
child = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
print("host read of device memory: child exited with", child.returncode, "(-11 is SIGSEGV)")
# LITERALINCLUDE END: EXAMPLE_DEVICE_MEMORY_FAULT

# LITERALINCLUDE START: EXAMPLE_DEVICE_ASYNC
# A launch returns before the kernel has run; synchronizing waits for it.
x = torch.randn(1024, 1024, device="openreg")
start = time.perf_counter()
for _ in range(10):
    y = x @ x
launched = time.perf_counter() - start
torch.openreg.synchronize()
finished = time.perf_counter() - start
print(f"10 matmuls queued in {launched * 1e3:.1f} ms, finished after {finished * 1e3:.1f} ms")
# LITERALINCLUDE END: EXAMPLE_DEVICE_ASYNC

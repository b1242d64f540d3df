"""Troubleshooting: the errors a user of the backend meets, each provoked and printed."""

import os
import subprocess
import sys
import warnings

import torch


def show(title: str, action) -> None:
    try:
        with warnings.catch_warnings():  # the error is the point, not the warnings before it
            warnings.simplefilter("ignore")
            action()
        print(f"{title}: no error")
    except Exception as e:  # print what the user would see, first line only
        print(f"{title}:\n  {type(e).__name__}: {str(e).splitlines()[0]}")


# LITERALINCLUDE START: EXAMPLE_TROUBLESHOOTING_ERRORS
a = torch.ones(2, device="openreg:0")
b = torch.ones(2, device="openreg:1")
show("a device index that does not exist", lambda: torch.ones(2, device="openreg:7"))
show("tensors on two devices", lambda: a + b)
show("more memory than the device has", lambda: torch.empty(1 << 42, device="openreg"))
show("an operator that cannot fall back",
     lambda: torch.from_file(__file__, size=4, device="openreg"))
show("a dispatch key with no kernel and no fallback",
     lambda: torch.nested.nested_tensor([a, a[:1]]).sin())
# LITERALINCLUDE END: EXAMPLE_TROUBLESHOOTING_ERRORS

# LITERALINCLUDE START: EXAMPLE_TROUBLESHOOTING_ASYNC
# A kernel that fails on the device is reported at the next synchronization, like a GPU fault;
# OPENREG_LAUNCH_BLOCKING=1 reports it at the call that launched it.
FAULTY = """
import torch
x = torch.ones(4, device="openreg")
torch.openreg.faults.inject("launch")      # the next kernel launch fails on the device
where = "the launch"
try:
    y = x * 2
    where = "synchronize"
    torch.openreg.synchronize()
except RuntimeError as e:
    print("  raised at", where + ":", str(e).splitlines()[0])
"""
for blocking in ("0", "1"):
    print(f"OPENREG_LAUNCH_BLOCKING={blocking}")
    env = {**os.environ, "OPENREG_LAUNCH_BLOCKING": blocking}
    run = subprocess.run([sys.executable, "-c", FAULTY], capture_output=True, text=True,
                         env=env, timeout=120)
    print(run.stdout, end="")
# LITERALINCLUDE END: EXAMPLE_TROUBLESHOOTING_ASYNC

# LITERALINCLUDE START: EXAMPLE_TROUBLESHOOTING_SEGFAULT
# The host read a device pointer: the process dies with SIGSEGV. python -X faulthandler
# prints the Python line that did it.
TOUCH = """
import ctypes, torch
t = torch.ones(4, device="openreg")
ctypes.c_float.from_address(t.data_ptr()).value   # host code dereferencing device memory
"""
run = subprocess.run([sys.executable, "-X", "faulthandler", "-c", TOUCH], capture_output=True,
                     text=True, timeout=120)
print("exit code", run.returncode)
print("\n".join(line for line in run.stderr.splitlines()
                if "Segmentation fault" in line or 'File "<string>", line 4' in line))
# LITERALINCLUDE END: EXAMPLE_TROUBLESHOOTING_SEGFAULT

# LITERALINCLUDE START: EXAMPLE_TROUBLESHOOTING_HANG
# Something waits forever: find the stream that still has work. A stalled device is
# simulated with a delay on every task.
streams = [torch.openreg.Stream() for _ in range(3)]
with torch.openreg.faults.stream_delay(200_000):      # 200 ms before every task
    with torch.openreg.stream(streams[1]):
        y = torch.ones(4, device="openreg") * 2
    print("streams with pending work:", [i for i, s in enumerate(streams) if not s.query()])
    streams[1].synchronize()
print("after synchronize:", [i for i, s in enumerate(streams) if not s.query()])
# LITERALINCLUDE END: EXAMPLE_TROUBLESHOOTING_HANG

# LITERALINCLUDE START: EXAMPLE_TROUBLESHOOTING_RESIZED_OUTPUT
# What a backend with no mse_loss kernel runs on the CPU for every mse_loss: the out=
# variant, given a 0-dim result. The CPU kernel sizes `out` as the elementwise loss first,
# and warns because `out` already had an element.
inputs, targets = torch.randn(8, 1), torch.randn(8, 1)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    loss = torch.empty(())
    torch._C._nn.mse_loss(inputs, targets, 1, out=loss)  # 1: reduction="mean"
print("mse_loss, out= a 0-dim tensor:", str(caught[0].message).split(" since")[0])
print("the loss is still right:", torch.equal(loss, torch.nn.functional.mse_loss(inputs, targets)))
# LITERALINCLUDE END: EXAMPLE_TROUBLESHOOTING_RESIZED_OUTPUT

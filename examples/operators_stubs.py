"""Which kernels can be registered as stubs: the DispatchStubs exported by the installed torch."""

import os
import subprocess

import torch

# Every DispatchStub is a global object named *_stub in libtorch_cpu: the
# innermost loops that shared implementations (like abs.out) call per device.
library = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
symbols = subprocess.run(["nm", "-DC", library], capture_output=True, text=True).stdout
stubs = sorted({line.split()[-1].rsplit("::", 1)[-1] for line in symbols.splitlines()
                if line.split()[-1].endswith("_stub") and " B " in line})
print(f"{len(stubs)} dispatch stubs in torch {torch.__version__}, for example:")
for start in range(0, 24, 6):
    print("  " + ", ".join(stubs[start:start + 6]))
print("abs_stub is among them:", "abs_stub" in stubs)

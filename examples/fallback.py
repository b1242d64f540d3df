"""The CPU fallback, seen from a program: a warning once per operator, counts, strict mode."""

import os
import subprocess
import sys
import warnings

import torch

# LITERALINCLUDE START: EXAMPLE_FALLBACK
torch.openreg.reset_fallback_counts()
x = torch.tensor([[0.0, 1.5], [-2.0, 0.0]], device="openreg")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(3):
        values, indices = torch.cummax(x, 0)  # PyTorch has no Meta kernel for it: no plan
    logsum = torch.logaddexp(x, x)  # registered to fall back, operator by operator
print(len(caught), "warnings for 4 fallbacks, first:", str(caught[0].message).split(" is not")[0])
print(torch.openreg.fallback_report())

# OPENREG_STRICT_FALLBACK=1 turns every fallback into an error naming the operator.
strict = subprocess.run(
    [sys.executable, "-c", "import torch; torch.cummax(torch.ones(2, device='openreg'), 0)"],
    env={**os.environ, "OPENREG_STRICT_FALLBACK": "1"}, capture_output=True, text=True)
print("strict mode:", strict.stderr.strip().splitlines()[-1])

try:
    torch.from_file(__file__, size=4, device="openreg")  # a factory: nothing to copy back
except NotImplementedError as error:
    print("refused:", error)
# LITERALINCLUDE END: EXAMPLE_FALLBACK

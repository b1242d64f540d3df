"""Checks a few operators against the CPU with PyTorch's own OpInfo samples."""

# LITERALINCLUDE START: EXAMPLE_TESTING
import torch
import torch_openreg  # noqa: F401
from torch.testing._internal.common_methods_invocations import op_db

from torch_openreg.openreg.testing import check_op

by_name = {op.name: op for op in op_db if not op.variant_test_name}
for name, dtype in [("add", torch.float32), ("resolve_conj", torch.complex64),
                    ("fft.ifft", torch.float32), ("fft.hfft", torch.complex64),
                    ("exponential", torch.float32), ("multinomial", torch.float32)]:
    outcome = check_op(by_name[name], dtype)
    print(f"{name:13} {str(dtype):15} {outcome.status:5} ({outcome.samples} samples)")

# What the conj-bit fix means for a user: a conjugate view copied to the CPU.
z = torch.tensor([1 + 2j, 3 - 4j], device="openreg")
print("z.conj().cpu() =", z.conj().cpu())
# LITERALINCLUDE END: EXAMPLE_TESTING

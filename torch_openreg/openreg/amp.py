"""torch.openreg.amp: what torch.autocast and torch.amp ask of the openreg device module."""

import torch


# LITERALINCLUDE START: AMP_PYTHON_SUPPORTED_DTYPES
def get_amp_supported_dtype() -> list[torch.dtype]:
    """The dtypes ``torch.autocast("openreg", dtype=...)`` accepts.

    torch.autocast calls this for a PrivateUse1 backend: a dtype not listed
    warns and disables autocast, as on CUDA. The device computes both in its
    half and bfloat16 kernels, accumulating in float32.
    """
    return [torch.float16, torch.bfloat16]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """True: openreg computes bfloat16 natively (the counterpart of torch.cuda's)."""
    return True
# LITERALINCLUDE END: AMP_PYTHON_SUPPORTED_DTYPES

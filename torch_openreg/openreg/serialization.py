"""The openreg tensors' private internal format, which checkpoints carry.

A vendor's kernels may keep a tensor in an internal layout that PyTorch does not
know about. The backend stores it in the tensor's ``BackendMeta``; torch.save
writes it into the checkpoint's tensor metadata and torch.load restores it.
"""

import torch

from torch_openreg import _C

__all__ = ["internal_format", "set_internal_format"]


def internal_format(tensor: torch.Tensor) -> str:
    """The internal format of an openreg tensor: ``"plain"`` (default), ``"tiled"`` or ``"blocked"``."""
    return _C._internal_format(tensor)


def set_internal_format(tensor: torch.Tensor, fmt: str) -> None:
    """Records ``fmt`` as the internal format of ``tensor`` (an openreg tensor)."""
    _C._set_internal_format(tensor, fmt)

"""The openreg tensors' private internal format, which checkpoints carry.

A vendor's kernels may keep a tensor in an internal layout that PyTorch does not
know about. The backend stores it in the tensor's ``BackendMeta``; torch.save
writes it into the checkpoint's tensor metadata and torch.load restores it.
"""

import functools

import torch

from torch_openreg import _C

__all__ = ["internal_format", "set_internal_format"]


def internal_format(tensor: torch.Tensor) -> str:
    """The internal format of an openreg tensor: ``"plain"`` (default), ``"tiled"`` or
    ``"blocked"``."""
    return _C._internal_format(tensor)


def set_internal_format(tensor: torch.Tensor, fmt: str) -> None:
    """Records ``fmt`` as the internal format of ``tensor`` (an openreg tensor)."""
    _C._set_internal_format(tensor, fmt)


# LITERALINCLUDE START: SERIALIZATION_DEEPCOPY
def _keep_backend_meta(deepcopy):
    """Wraps Tensor.__deepcopy__ so that an openreg copy keeps the source's BackendMeta.

    torch 2.13 rebuilds a deep copy from a copied storage (``new_empty([]).set_(...)``), which
    never sees the source TensorImpl and offers no backend hook; nn.Parameter's deepcopy goes
    through ``clone``, whose openreg kernel keeps the attribute itself.
    """
    @functools.wraps(deepcopy)
    def __deepcopy__(self, memo):
        copied = deepcopy(self, memo)
        if self.device.type == "openreg" and isinstance(copied, torch.Tensor):
            metadata = torch._utils.get_tensor_metadata(self)
            if metadata:
                torch._utils.set_tensor_metadata(copied, metadata)
        return copied
    return __deepcopy__


torch.Tensor.__deepcopy__ = _keep_backend_meta(torch.Tensor.__deepcopy__)
# LITERALINCLUDE END: SERIALIZATION_DEEPCOPY

"""Sharing openreg tensors between processes through ``torch.multiprocessing``.

The reductions mirror what ``torch/multiprocessing/reductions.py`` does for CUDA:
the sender pickles a handle to the device memory (the device's memfd, passed as
a file descriptor like the CPU ``file_descriptor`` strategy does) plus a control
block carrying the sender's event and the receivers' reference count; the
receiver maps the same memory. Other tensors keep PyTorch's own reductions.
"""

import multiprocessing.reduction
import os
from typing import Any

import torch
import torch.multiprocessing.reductions as torch_reductions
from torch.multiprocessing.reductions import StorageWeakRef, shared_cache, storage_from_cache

from torch_openreg import _C

__all__ = ["ipc_collect"]


def ipc_collect() -> int:
    """Frees shared memory that this process dropped and every receiver released.

    Like ``torch.cuda.ipc_collect``. Returns how many shared storages are still
    held by other processes.
    """
    return _C._ipc_collect()


def _rebuild_empty_openreg_tensor(cls, size, stride, offset, dtype, requires_grad, device):
    storage = torch.UntypedStorage(0, device=device)
    return _finish_tensor(cls, storage, size, stride, offset, dtype, requires_grad, {})


def _finish_tensor(cls, storage, size, stride, offset, dtype, requires_grad, metadata):
    typed = torch.TypedStorage(wrap_storage=storage, dtype=dtype, _internal=True)
    t = torch._utils._rebuild_tensor(typed, offset, size, stride)
    if metadata:
        torch._utils.set_tensor_metadata(t, metadata)
    if cls is torch.nn.Parameter:
        # Integer parameters need requires_grad=False at construction.
        return torch.nn.Parameter(t, requires_grad=requires_grad)
    t.requires_grad = requires_grad
    return t


# LITERALINCLUDE START: SHARING_REBUILD
def _rebuild_openreg_tensor(
    cls, size, stride, offset, dtype, requires_grad, metadata, sender_pid, handle, memory_df,
    control_df
):
    physical_device, mem_offset, nbytes, marker = handle
    try:
        memory_fd = memory_df.detach()
        control_fd = control_df.detach()
    except (OSError, EOFError) as e:
        raise RuntimeError(
            f"cannot receive an openreg tensor from process {sender_pid}: the sender exited (or "
            "closed its end) before this process opened the shared memory; keep the sending "
            "process alive until every receiver has unpickled its tensors"
        ) from e
    try:
        key = ("openreg", sender_pid, physical_device, mem_offset, nbytes)
        storage = storage_from_cache(torch.UntypedStorage, key)
        if storage is None:
            storage = _C._open_shared_openreg_storage(
                physical_device, memory_fd, mem_offset, nbytes, control_fd, marker
            ).untyped_storage()
            shared_cache[key] = StorageWeakRef(storage)
        else:
            # Already mapped here: the sender counted one more reference for
            # this message, give it back.
            _C._release_shared_openreg_reference(physical_device, mem_offset, nbytes, control_fd,
                                                 marker)
    finally:
        os.close(memory_fd)
        os.close(control_fd)
    return _finish_tensor(cls, storage, size, stride, offset, dtype, requires_grad, metadata)
# LITERALINCLUDE END: SHARING_REBUILD


# LITERALINCLUDE START: SHARING_REDUCE_TENSOR
def _reduce_tensor(tensor: torch.Tensor) -> tuple[Any, tuple]:
    if tensor.device.type != "openreg":
        return torch_reductions.reduce_tensor(tensor)
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries. Call detach() on the tensor first."
        )
    torch.utils.hooks.warn_if_has_hooks(tensor)
    meta = (tensor.size(), tensor.stride(), tensor.storage_offset(), tensor.dtype,
            tensor.requires_grad)
    if tensor.untyped_storage().nbytes() == 0:
        return (_rebuild_empty_openreg_tensor, (type(tensor), *meta, tensor.device))
    physical_device, memory_fd, mem_offset, nbytes, control_fd, marker = (
        _C._share_openreg_storage(tensor)
    )
    handle = (physical_device, mem_offset, nbytes, marker)
    # DupFd sends the descriptors over a Unix socket when the receiver unpickles
    # (or through the spawned child's inherited descriptors for Process args).
    return (
        _rebuild_openreg_tensor,
        (
            type(tensor),
            *meta,
            torch._utils.get_tensor_metadata(tensor),
            os.getpid(),
            handle,
            multiprocessing.reduction.DupFd(memory_fd),
            multiprocessing.reduction.DupFd(control_fd),
        ),
    )
# LITERALINCLUDE END: SHARING_REDUCE_TENSOR


def _reduce_storage(storage):
    if storage.device.type == "openreg":
        raise RuntimeError("Cannot pickle openreg storage; try pickling an openreg tensor instead")
    return torch_reductions.reduce_storage(storage)


# LITERALINCLUDE START: SHARING_REGISTER
def _register_reductions() -> None:
    """Installs the openreg reductions in multiprocessing's pickler.

    torch.multiprocessing registered PyTorch's reductions when it was imported
    (above); ours replace them for the same types and hand every tensor that is
    not on openreg back to PyTorch's.
    """
    reducers = multiprocessing.reduction.ForkingPickler
    for cls in (torch.Tensor, torch.nn.Parameter):
        reducers.register(cls, _reduce_tensor)
    reducers.register(torch.UntypedStorage, _reduce_storage)
# LITERALINCLUDE END: SHARING_REGISTER


_register_reductions()

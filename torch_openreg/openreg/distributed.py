"""torch.openreg.distributed: the ``orccl`` backend of torch.distributed for openreg tensors.

Importing torch_openreg registers it, so ``dist.init_process_group()`` in a program that
uses openreg picks it without being told (like NCCL for CUDA).
"""

from datetime import timedelta

import torch.distributed as dist

from torch_openreg import _C

BACKEND_NAME = "orccl"

__all__ = ["BACKEND_NAME"]


# LITERALINCLUDE START: DISTRIBUTED_CREATOR
def _create_backend(
    store: "dist.Store", rank: int, size: int, timeout: timedelta
) -> "dist.Backend":
    """What init_process_group calls to build the openreg part of a process group."""
    # The transport moves the staged host buffers: torch's Gloo, on its own keys
    # of the group's store. A vendor creates its own communicator here instead.
    transport = dist.ProcessGroupGloo(dist.PrefixStore("transport/", store), rank, size, timeout)
    return _C._distributed_create_backend(transport, rank, size)
# LITERALINCLUDE END: DISTRIBUTED_CREATOR


# LITERALINCLUDE START: DISTRIBUTED_REGISTER
def _register() -> None:
    # devices=["openreg"] makes orccl the default backend of the openreg device:
    # plain init_process_group() and "cpu:gloo,openreg:orccl" both find it.
    if dist.is_available() and BACKEND_NAME not in dist.Backend.backend_list:
        dist.Backend.register_backend(BACKEND_NAME, _create_backend, devices=["openreg"])


_register()
# LITERALINCLUDE END: DISTRIBUTED_REGISTER

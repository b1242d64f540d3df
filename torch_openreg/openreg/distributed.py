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


# LITERALINCLUDE START: DISTRIBUTED_SPLIT_OPTIONS
class _SplitOptions(dist.ProcessGroupGloo._Options):
    """The options split_group deep-copies for a subgroup: Gloo's, so the transport's split
    reads them; split_group sets the subgroup's name and ranks on its copy only."""

    def __deepcopy__(self, memo) -> "_SplitOptions":
        return _SplitOptions.copy_of(self)

    @staticmethod
    def copy_of(options: "dist.ProcessGroupGloo._Options") -> "_SplitOptions":
        copy = _SplitOptions()
        copy._timeout, copy._threads = options._timeout, options._threads
        copy._devices = list(options._devices)  # the network interfaces: shared
        copy.group_name = options.group_name
        copy.global_ranks_in_group = list(options.global_ranks_in_group)
        return copy


# split_group reads `backend.options` (ProcessGroupNCCL has it): a copy, never the
# transport's own, which still maps the parent group's ranks.
_C._OrcclBackend.options = property(lambda self: _SplitOptions.copy_of(self._transport_options))
# LITERALINCLUDE END: DISTRIBUTED_SPLIT_OPTIONS


# LITERALINCLUDE START: DISTRIBUTED_REGISTER
def _register() -> None:
    # devices=["openreg"] makes orccl the default backend of the openreg device:
    # plain init_process_group() and "cpu:gloo,openreg:orccl" both find it.
    if dist.is_available() and BACKEND_NAME not in dist.Backend.backend_list:
        dist.Backend.register_backend(BACKEND_NAME, _create_backend, devices=["openreg"])


_register()
# LITERALINCLUDE END: DISTRIBUTED_REGISTER

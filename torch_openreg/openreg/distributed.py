"""torch.openreg.distributed: the ``orccl`` backend of torch.distributed for openreg tensors.

Importing torch_openreg registers it, so ``dist.init_process_group()`` in a program that
uses openreg picks it without being told (like NCCL for CUDA).
"""

import torch
import torch.distributed as dist

from torch_openreg import _C

BACKEND_NAME = "orccl"

__all__ = ["BACKEND_NAME"]


# LITERALINCLUDE START: DISTRIBUTED_CREATOR
def _create_backend(opts: "dist._DistributedBackendOptions", _pg_options) -> "dist.Backend":
    """What init_process_group and new_group call to build the openreg part of a group."""
    # The transport moves the host tensors orccl hands it: torch's Gloo, on its own keys
    # of the group's store. A vendor creates its own communicator here instead.
    rank, size = opts.group_rank, opts.group_size
    transport = dist.ProcessGroupGloo(dist.PrefixStore("transport/", opts.store), rank, size,
                                      opts.timeout)
    # Gloo's split names the subgroup's ranks by the ranks of the world these are (none given:
    # the world itself), as torch tells the Gloo it makes for a group.
    transport.options.global_ranks_in_group = opts.global_ranks_in_group or list(range(size))
    transport.options.group_name = opts.group_id
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


def _nocolor_split(backend: "dist.Backend", device: "torch.device") -> None:
    """What new_group asks of a rank outside the new group when the backend splits: NCCL's
    communicator split needs every rank of the parent. The members of an orccl group build
    its transport from the store (the creator above), so the others have nothing to do."""


_C._OrcclBackend.perform_nocolor_split = _nocolor_split
# LITERALINCLUDE END: DISTRIBUTED_SPLIT_OPTIONS


# LITERALINCLUDE START: DISTRIBUTED_REGISTER
def _register() -> None:
    # devices=["openreg"] makes orccl the default backend of the openreg device:
    # plain init_process_group() and "cpu:gloo,openreg:orccl" both find it. The
    # extended API hands the creator the group's global ranks and name.
    if dist.is_available() and BACKEND_NAME not in dist.Backend.backend_list:
        dist.Backend.register_backend(BACKEND_NAME, _create_backend, devices=["openreg"],
                                      extended_api=True)


_register()
# LITERALINCLUDE END: DISTRIBUTED_REGISTER

"""A 2-D DeviceMesh on openreg: FSDP2 over one dimension, tensor parallelism over the other.

The CUDA recipe unchanged: ``init_process_group(device_id=...)`` binds the group to a device, so
``init_device_mesh`` splits it into the mesh's subgroups (the backend's split). Four processes:
``torchrun --nproc-per-node 4 examples/distributed_mesh.py``, or run as a script, which starts them
with torch.multiprocessing. The loss curve must equal that of one device on the whole batch.
"""

import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                               parallelize_module)

STEPS = 3


def mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16))


def batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(8, 16, generator=g), torch.randn(8, 16, generator=g)


def train(model, x, y, on_loss):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        on_loss(loss.detach())


def reference(device) -> list[float]:
    """One device, the whole batch."""
    x, y = batch()
    losses = []
    train(mlp().to(device), x.to(device), y.to(device), lambda loss: losses.append(loss.item()))
    return losses


# LITERALINCLUDE START: DISTRIBUTED_MESH_EXAMPLE
def fsdp_tp(device: torch.device) -> list[float]:
    # 2 x 2: "dp" shards parameters and data (FSDP2), "tp" splits each layer (tensor parallel).
    mesh = init_device_mesh("openreg", (2, 2), mesh_dim_names=("dp", "tp"))
    model = mlp().to(device)
    parallelize_module(model, mesh["tp"], {"0": ColwiseParallel(), "2": RowwiseParallel()})
    fully_shard(model, mesh=mesh["dp"])
    x, y = batch()  # the two ranks of one "tp" group take the same half of the batch
    dp_rank = mesh["dp"].get_local_rank()
    x, y = x.chunk(2)[dp_rank].to(device), y.chunk(2)[dp_rank].to(device)
    losses = []

    def on_loss(loss):  # the loss of the whole batch: the mean over the "dp" halves
        dist.all_reduce(loss, op=dist.ReduceOp.AVG, group=mesh["dp"].get_group())
        losses.append(loss.item())

    train(model, x, y, on_loss)
    return losses
# LITERALINCLUDE END: DISTRIBUTED_MESH_EXAMPLE


def main() -> None:
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("openreg", local_rank % torch.openreg.device_count())
    torch.accelerator.set_device_index(device.index)
    dist.init_process_group(device_id=device)  # bound to the device: meshes split this group
    try:
        losses = fsdp_tp(device)
        if dist.get_rank() == 0:
            want = reference(device)
            print("2-D mesh losses:", [f"{v:.5f}" for v in losses])
            print("one device:     ", [f"{v:.5f}" for v in want])
            print("FSDP2 x TP matches one device:",
                  torch.allclose(torch.tensor(losses), torch.tensor(want), rtol=1e-5, atol=1e-6))
    finally:
        dist.destroy_process_group()


def spawned(rank: int, world: int, port: int) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      LOCAL_RANK=str(rank), WORLD_SIZE=str(world))
    main()


if __name__ == "__main__":
    if "RANK" in os.environ:  # started by torchrun
        main()
    else:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        mp.spawn(spawned, args=(4, port), nprocs=4)

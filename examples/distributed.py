"""DDP and FSDP2 on two openreg devices, one process each, checked against one process.

Run as a script it starts its two processes with torch.multiprocessing; under
``torchrun --nproc-per-node 2 examples/distributed.py`` torchrun starts them.
"""

import os
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.fsdp import fully_shard
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS = 3


def cnn() -> nn.Module:
    # The borrowed-kernels chapter's CNN without BatchNorm: per-rank batch
    # statistics would differ from those of the combined batch.
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(32, 10))


def block() -> nn.Module:
    return nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0,
                                      batch_first=True)


def batches(kind: str):
    g = torch.Generator().manual_seed(1)
    if kind == "cnn":
        return torch.randn(16, 3, 16, 16, generator=g), torch.randint(0, 10, (16,), generator=g)
    return torch.randn(8, 12, 64, generator=g), torch.randn(8, 12, 64, generator=g)


def loss_of(kind: str, out, y):
    return nn.functional.cross_entropy(out, y) if kind == "cnn" else nn.functional.mse_loss(out, y)


def train(model, kind, x, y, steps=STEPS):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for _ in range(steps):
        optimizer.zero_grad()
        loss_of(kind, model(x), y).backward()
        optimizer.step()
    return model


def reference(make, kind, device):
    """One process, the combined batch of both ranks."""
    torch.manual_seed(0)
    x, y = batches(kind)
    return [p.detach().cpu()
            for p in train(make().to(device), kind, x.to(device), y.to(device)).parameters()]


# LITERALINCLUDE START: DISTRIBUTED_EXAMPLE_DDP
def ddp_cnn(rank: int, world: int, device: torch.device):
    torch.manual_seed(0)  # same initial parameters on every rank
    model = DDP(cnn().to(device), device_ids=[device])
    x, y = batches("cnn")
    x, y = x.chunk(world)[rank].to(device), y.chunk(world)[rank].to(device)  # this rank's half
    train(model, "cnn", x, y)
    return [p.detach().cpu() for p in model.module.parameters()]
# LITERALINCLUDE END: DISTRIBUTED_EXAMPLE_DDP


# LITERALINCLUDE START: DISTRIBUTED_EXAMPLE_FSDP
def fsdp_block(rank: int, world: int, device: torch.device, checkpoint_dir: str):
    torch.manual_seed(0)
    model = block().to(device)
    fully_shard(model)  # parameters become DTensors sharded over the two ranks
    x, y = batches("block")
    x, y = x.chunk(world)[rank].to(device), y.chunk(world)[rank].to(device)
    train(model, "block", x, y)
    full = [p.full_tensor().detach().cpu() for p in model.parameters()]
    # Save the sharded state (each rank writes its shards), disturb it, load it back.
    dcp.save(model.state_dict(), checkpoint_id=checkpoint_dir)
    saved = {k: v.full_tensor().cpu() for k, v in model.state_dict().items()}
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    state = model.state_dict()
    dcp.load(state, checkpoint_id=checkpoint_dir)
    model.load_state_dict(state)
    restored = all(torch.equal(saved[k], v.full_tensor().cpu())
                   for k, v in model.state_dict().items())
    return full, restored
# LITERALINCLUDE END: DISTRIBUTED_EXAMPLE_FSDP


def same(a, b) -> bool:
    return all(torch.allclose(p, q, atol=1e-5, rtol=1e-4) for p, q in zip(a, b))


# LITERALINCLUDE START: DISTRIBUTED_EXAMPLE_MAIN
def main(rank: int, world: int, checkpoint_dir: str) -> None:
    device = torch.device("openreg", rank)  # one device per process
    torch.accelerator.set_device_index(rank)  # FSDP2 and DeviceMesh use the current device
    dist.init_process_group(device_id=device)  # picks orccl for openreg by itself
    try:
        # Under torchrun each process made its own temporary directory: all use rank 0's.
        shared = [checkpoint_dir]
        dist.broadcast_object_list(shared, src=0)
        checkpoint_dir = shared[0]
        ddp_params = ddp_cnn(rank, world, device)
        fsdp_params, restored = fsdp_block(rank, world, device, checkpoint_dir)
        if rank == 0:
            print(f"backend: {dist.get_backend()}, world size {world}")
            print("DDP CNN matches one process on the whole batch:",
                  same(ddp_params, reference(cnn, "cnn", device)))
            print("FSDP2 transformer block matches one process on the whole batch:",
                  same(fsdp_params, reference(block, "block", device)))
            print("sharded checkpoint saved and loaded back:", restored)
    finally:
        dist.destroy_process_group()
# LITERALINCLUDE END: DISTRIBUTED_EXAMPLE_MAIN


def spawned(rank: int, world: int, port: int, checkpoint_dir: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                      RANK=str(rank), WORLD_SIZE=str(world))
    main(rank, world, checkpoint_dir)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as checkpoint_dir:
        if "RANK" in os.environ:  # started by torchrun
            main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]),
                 sys.argv[1] if len(sys.argv) > 1 else checkpoint_dir)
        else:
            with socket.socket() as s:  # a free port for the rendezvous
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            mp.spawn(spawned, args=(2, port, checkpoint_dir), nprocs=2)

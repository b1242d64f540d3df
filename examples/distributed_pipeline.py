"""Pipeline parallelism on openreg: two stages, GPipe and 1F1B, against the unpipelined model.

Each stage receives its activations (and, going back, their gradients) with dist.recv into
tensors that require grad. Two processes: ``torchrun --nproc-per-node 2
examples/distributed_pipeline.py``, or two torchrun launches as two nodes (docs/distributed.md),
or run as a script, which starts them with torch.multiprocessing.
"""

import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

STEPS = 2
MICROBATCHES = 4


def model() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                         nn.Linear(32, 8))


def batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(8, 16, generator=g), torch.randn(8, 8, generator=g)


def loss_fn(out, y):
    return nn.functional.mse_loss(out, y)


def reference(device) -> tuple[list[float], list[torch.Tensor]]:
    """One device, the whole batch, no pipeline."""
    net = model().to(device)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = (t.to(device) for t in batch())
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu() for p in net.parameters()]


# LITERALINCLUDE START: DISTRIBUTED_PIPELINE_EXAMPLE
def pipelined(schedule_class, rank: int, device: torch.device):
    # Stage 0 holds the first three layers, stage 1 the last two.
    layers = model()
    part = layers[:3] if rank == 0 else layers[3:]
    stage = PipelineStage(part.to(device), stage_index=rank, num_stages=2, device=device)
    schedule = schedule_class(stage, n_microbatches=MICROBATCHES, loss_fn=loss_fn)
    optimizer = torch.optim.SGD(part.parameters(), lr=0.1)
    x, y = (t.to(device) for t in batch())
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        if rank == 0:
            schedule.step(x)  # sends activations, receives their gradients
        else:
            step_losses = []  # one per microbatch
            schedule.step(target=y, losses=step_losses)
            losses.append(torch.stack(step_losses).mean().item())
        optimizer.step()
    return losses, [p.detach().cpu() for p in part.parameters()]
# LITERALINCLUDE END: DISTRIBUTED_PIPELINE_EXAMPLE


def main() -> None:
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    assert world == 2, "two pipeline stages: two processes"
    device = torch.device("openreg", int(os.environ["LOCAL_RANK"]) % torch.openreg.device_count())
    torch.accelerator.set_device_index(device.index)
    dist.init_process_group(device_id=device)
    try:
        want_losses, want_params = reference(device)
        mine = want_params[:4] if rank == 0 else want_params[4:]  # this stage's parameters
        for schedule_class in (ScheduleGPipe, Schedule1F1B):
            losses, params = pipelined(schedule_class, rank, device)
            same = all(torch.allclose(p, q, rtol=1e-5, atol=1e-6) for p, q in zip(params, mine))
            flags = torch.tensor([float(same)], device=device)
            dist.all_reduce(flags, op=dist.ReduceOp.MIN)  # both stages' parameters
            if rank == 1:
                same_losses = torch.allclose(torch.tensor(losses), torch.tensor(want_losses),
                                             rtol=1e-5, atol=1e-6)
                print(f"{schedule_class.__name__}: losses {[f'{v:.5f}' for v in losses]}, "
                      f"unpipelined {[f'{v:.5f}' for v in want_losses]}")
                print(f"{schedule_class.__name__} matches the unpipelined model:",
                      same_losses and bool(flags.item()))
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
        mp.spawn(spawned, args=(2, port), nprocs=2)

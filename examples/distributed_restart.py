"""Training that survives a dead rank: torchrun restarts the job, which resumes from its last
distributed checkpoint and ends where an uninterrupted run ends.

    torchrun --standalone --nproc-per-node 2 --max-restarts 1 \\
        examples/distributed_restart.py CHECKPOINT_DIR [--crash-at STEP]

With --crash-at, rank 1 dies at that step of the first attempt (os._exit, as a killed process
or a lost node would); torchrun then starts both ranks again (TORCHELASTIC_RESTART_COUNT 1).
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS = 6


def mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))


def batch(step: int):
    """The whole batch of a step (both ranks' halves): the same on every attempt."""
    g = torch.Generator().manual_seed(100 + step)
    return torch.randn(8, 16, generator=g), torch.randn(8, 4, generator=g)


def step_once(model, optimizer, x, y) -> None:
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()


def uninterrupted(device: torch.device) -> list[torch.Tensor]:
    """One process, whole batches, no fault: what the resumed job must end with."""
    torch.manual_seed(0)
    model = mlp().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    for step in range(STEPS):
        x, y = batch(step)
        step_once(model, optimizer, x.to(device), y.to(device))
    return [p.detach().cpu() for p in model.parameters()]


# LITERALINCLUDE START: DISTRIBUTED_RESTART_EXAMPLE
def latest_step(checkpoint_dir: str) -> int | None:
    """The last step whose checkpoint every rank finished writing (rank 0 writes the marker
    after a barrier), or None on a first start."""
    marker = os.path.join(checkpoint_dir, "latest")
    return int(open(marker).read()) if os.path.exists(marker) else None


def train(rank: int, world: int, device: torch.device, checkpoint_dir: str,
          crash_at: int | None) -> tuple[int, list[torch.Tensor]]:
    torch.manual_seed(0)  # same initial parameters on every rank
    model = DDP(mlp().to(device), device_ids=[device])
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    start = 0
    resumed = latest_step(checkpoint_dir)
    if resumed is not None:  # a restart: model and optimizer state as the last checkpoint left them
        model_state, optim_state = get_state_dict(model, optimizer)
        state = {"model": model_state, "optim": optim_state}
        dcp.load(state, checkpoint_id=os.path.join(checkpoint_dir, f"step{resumed}"))
        set_state_dict(model, optimizer, model_state_dict=state["model"],
                       optim_state_dict=state["optim"])
        start = resumed + 1
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    for step in range(start, STEPS):
        if step == crash_at and attempt == 0 and rank == 1:
            os._exit(1)  # the fault: this rank dies; its peer's next collective fails
        x, y = batch(step)
        x, y = x.chunk(world)[rank].to(device), y.chunk(world)[rank].to(device)
        step_once(model, optimizer, x, y)
        model_state, optim_state = get_state_dict(model, optimizer)
        dcp.save({"model": model_state, "optim": optim_state},
                 checkpoint_id=os.path.join(checkpoint_dir, f"step{step}"))
        dist.barrier()  # every rank has written its part before the marker names the step
        if rank == 0:
            with open(os.path.join(checkpoint_dir, "latest.tmp"), "w") as f:
                f.write(str(step))
            os.replace(os.path.join(checkpoint_dir, "latest.tmp"),
                       os.path.join(checkpoint_dir, "latest"))
    return start, [p.detach().cpu() for p in model.module.parameters()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoint_dir")
    parser.add_argument("--crash-at", type=int)
    args = parser.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("openreg", int(os.environ["LOCAL_RANK"]))
    torch.accelerator.set_device_index(device.index)
    # torchrun's store outlives an attempt, and so do the addresses the ranks of the failed
    # attempt published there: a restarted rank could read its peer's old address before the
    # peer writes its new one, and connect to a closed port. Each attempt keeps to its own keys.
    attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]),
                          is_master=False)
    dist.init_process_group(store=dist.PrefixStore(f"attempt{attempt}/", store), rank=rank,
                            world_size=world, device_id=device)
    try:
        start, params = train(rank, world, device, args.checkpoint_dir, args.crash_at)
        if rank == 0:
            print(f"attempt {attempt} started at step {start}")
            same = all(torch.allclose(p, q, atol=1e-6, rtol=1e-5)
                       for p, q in zip(params, uninterrupted(device)))
            print("matches an uninterrupted run:", same)
    finally:
        dist.destroy_process_group()
# LITERALINCLUDE END: DISTRIBUTED_RESTART_EXAMPLE


if __name__ == "__main__":
    main()

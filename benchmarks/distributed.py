"""Collectives and DDP on two openreg ranks against the same work on CPU tensors with plain Gloo.

    python benchmarks/distributed.py            # 64 MiB all_reduce and DDP steps (a few minutes)
    python benchmarks/distributed.py --quick    # a few iterations, to check it runs

all_reduce: each rank holds a 64 MiB float32 tensor; the group is "cpu:gloo,openreg:orccl", so
the CPU tensor goes to Gloo directly and the openreg tensor through orccl's staging onto Gloo.
Rounds alternate as in benchmarks/run.py; the ratio is the median of per-round ratios
(openreg / CPU). DDP: the time of one training step of the CNN with a 16-image batch per rank,
on 2 ranks against 1 rank (the same per-rank work, so 1.00 would be perfect weak scaling),
one intra-op thread per rank. A full run (not --quick) writes benchmarks/results/distributed.json
(benchmarks/record.py).
"""

import argparse
import os
import socket
import statistics
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record import add_results_option, ratio_case, write  # noqa: E402
from run import alternate  # noqa: E402  (the alternating-rounds harness)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(32, 10))


def all_reduce_case(rank: int, world: int, port: int, quick: bool, results) -> None:
    dev = torch.device("openreg", rank)
    torch.accelerator.set_device_index(rank)
    dist.init_process_group("cpu:gloo,openreg:orccl", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world, timeout=timedelta(seconds=120))
    n = (64 << 20) // 4
    cpu_t, dev_t = torch.ones(n), torch.ones(n, device=dev)
    cpu, device, ratios = alternate(lambda: dist.all_reduce(cpu_t),
                                    lambda: dist.all_reduce(dev_t),
                                    iterations=1 if quick else 3, rounds=2 if quick else 7)
    # Both tensors went through the same number of all_reduces: same values.
    assert torch.equal(cpu_t, dev_t.cpu()), "openreg all_reduce differs from Gloo's"
    if rank == 0:
        results["all_reduce"] = (statistics.median(cpu), statistics.median(device), ratios)
    dist.destroy_process_group()


def ddp_case(rank: int, world: int, port: int, quick: bool, results) -> None:
    from torch.nn.parallel import DistributedDataParallel as DDP

    dev = torch.device("openreg", rank)
    torch.accelerator.set_device_index(rank)
    torch.set_num_threads(1)  # as torchrun does: two ranks' OpenMP pools would fight for 2 cores
    dist.init_process_group(init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            device_id=dev, timeout=timedelta(seconds=120))
    torch.manual_seed(0)
    model = DDP(cnn().to(dev), device_ids=[dev])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 3, 32, 32, device=dev), torch.randint(0, 10, (16,), device=dev)

    def step():
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    for _ in range(3):
        step()
    torch.openreg.synchronize()
    times = []
    for _ in range(3 if quick else 20):
        dist.barrier()
        start = time.perf_counter()
        step()
        torch.openreg.synchronize()
        times.append(time.perf_counter() - start)
    if rank == 0:
        results[f"ddp{world}"] = statistics.median(times)
    dist.destroy_process_group()


def spawn(fn, world: int, quick: bool) -> dict:
    with mp.Manager() as manager:
        results = manager.dict()
        mp.spawn(fn, args=(world, free_port(), quick, results), nprocs=world)
        return dict(results)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    add_results_option(parser)
    args = parser.parse_args(argv)
    cpu, device, ratios = spawn(all_reduce_case, 2, args.quick)["all_reduce"]
    cases = [ratio_case("all_reduce 64 MiB, 2 ranks", ratios, 1.3)]
    print(f"{'case':34} {'CPU/Gloo':>10} {'openreg':>10} {'ratio':>7} {'target':>7}")
    print(f"{'all_reduce 64 MiB, 2 ranks':34} {cpu * 1e3:8.1f}ms {device * 1e3:8.1f}ms "
          f"{cases[0]['ratio']:7.2f} {'<= 1.3':>7}")
    one = spawn(ddp_case, 1, args.quick)["ddp1"]
    two = spawn(ddp_case, 2, args.quick)["ddp2"]
    # One run of each world size, one after the other: a single ratio of their median steps.
    cases.append(ratio_case("DDP CNN step, 2 ranks / 1 rank", [two / one], spread=False,
                            note="the same per-rank work: 1.00 is perfect weak scaling"))
    print(f"{'DDP CNN step, 1 rank vs 2 ranks':34} {one * 1e3:8.1f}ms {two * 1e3:8.1f}ms "
          f"{two / one:7.2f} {'':>7}")
    if not args.quick:
        write("distributed", "Collectives and DDP",
              "all_reduce of 64 MiB on two openreg ranks against CPU tensors on Gloo, and a DDP "
              "training step on two ranks against one.",
              {"all_reduce_rounds": 7, "all_reduce_iterations": 3, "ddp_steps": 20}, cases,
              args.results, argv)


if __name__ == "__main__":
    main()

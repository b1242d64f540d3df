"""Collectives and DDP on openreg ranks against the same work on CPU tensors with plain Gloo.

    python benchmarks/distributed.py            # all_reduce at 2 and 4 ranks, DDP (a few minutes)
    python benchmarks/distributed.py --quick    # a few iterations, to check it runs

all_reduce: each rank holds a 64 MiB float32 tensor; the group is "cpu:gloo,openreg:orccl", so
the CPU tensor goes to Gloo directly and the openreg tensor through orccl onto Gloo: in place
(orccl's default) and staged through pinned copies (OPENREG_STAGE_COLLECTIVES=1), at 2 and 4
ranks. Rounds alternate as in benchmarks/run.py; the ratio is the median of per-round ratios
(openreg / CPU). Each staged run also times the staging copies alone (a 64 MiB copy from the
device and one back, every rank at once) and checks the cost model of docs/distributed.md:
staged time = Gloo's time + the two copies. DDP: the time of one training step of the CNN with
a 16-image batch per rank, on 2 ranks against 1 rank (the same per-rank work, so 1.00 would be
perfect weak scaling). Every rank has one intra-op thread, as under torchrun. A full run (not
--quick) writes benchmarks/results/distributed.json (benchmarks/record.py).
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
from record import add_results_option, ratio_case, value_case, write  # noqa: E402
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


def all_reduce_case(rank: int, world: int, port: int, quick: bool, results, staged: bool) -> None:
    if staged:  # read when the group's orccl backend is made
        os.environ["OPENREG_STAGE_COLLECTIVES"] = "1"
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
    # The staging copies alone, on every rank at once as in a staged collective.
    pinned = torch.empty(n, pin_memory=True)
    copies = []
    for _ in range(2 if quick else 5):
        dist.barrier()
        start = time.perf_counter()
        pinned.copy_(dev_t, non_blocking=True)
        dev_t.copy_(pinned, non_blocking=True)
        torch.openreg.synchronize()
        copies.append(time.perf_counter() - start)
    if rank == 0:
        results["all_reduce"] = (statistics.median(cpu), statistics.median(device), ratios,
                                 statistics.median(copies))
    dist.destroy_process_group()


def ddp_case(rank: int, world: int, port: int, quick: bool, results) -> None:
    from torch.nn.parallel import DistributedDataParallel as DDP

    dev = torch.device("openreg", rank)
    torch.accelerator.set_device_index(rank)
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


def spawn(fn, world: int, quick: bool, *args) -> dict:
    with mp.Manager() as manager:
        results = manager.dict()
        mp.spawn(fn, args=(world, free_port(), quick, results, *args), nprocs=world)
        return dict(results)


# LITERALINCLUDE START: DISTRIBUTED_COST_MODEL
def staged_prediction(gloo: float, copies: float) -> float:
    """The cost model of a staged collective, per call: the transport's own time on host memory,
    plus a copy of the tensor from the device before it and one back after it, taken while every
    rank of the machine copies at once (they share its memory bandwidth). In place, the copies
    are gone and the prediction is the transport's time."""
    return gloo + copies
# LITERALINCLUDE END: DISTRIBUTED_COST_MODEL


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    add_results_option(parser)
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # one intra-op thread a rank, as torchrun sets
    os.environ.setdefault("OPENREG_DEVICE_COUNT", "4")  # a device for each of 4 ranks
    cases = []
    print(f"{'case':40} {'CPU/Gloo':>10} {'openreg':>10} {'ratio':>7} {'model':>10}")
    for world in (2, 4):
        for staged in (False, True):
            cpu, device, ratios, copies = spawn(all_reduce_case, world, args.quick,
                                                staged)["all_reduce"]
            name = f"{'staged ' if staged else ''}all_reduce 64 MiB, {world} ranks"
            predicted = staged_prediction(cpu, copies) if staged else cpu
            error = abs(device - predicted) / device
            note = (f"cost model: Gloo {cpu * 1e3:.0f} ms + copies {copies * 1e3:.0f} ms = "
                    f"{predicted * 1e3:.0f} ms, measured {device * 1e3:.0f} ms"
                    if staged else None)
            cases.append(ratio_case(name, ratios, 1.2 if not staged and world == 2 else None,
                                    note=note))
            cases.append(value_case(f"cost model error, {name}", [100 * error], "%", 25))
            print(f"{name:40} {cpu * 1e3:8.1f}ms {device * 1e3:8.1f}ms "
                  f"{cases[-2]['ratio']:7.2f} {predicted * 1e3:8.1f}ms")
    one = spawn(ddp_case, 1, args.quick)["ddp1"]
    two = spawn(ddp_case, 2, args.quick)["ddp2"]
    # One run of each world size, one after the other: a single ratio of their median steps.
    cases.append(ratio_case("DDP CNN step, 2 ranks / 1 rank", [two / one], spread=False,
                            note="the same per-rank work: 1.00 is perfect weak scaling"))
    print(f"{'DDP CNN step, 1 rank vs 2 ranks':40} {one * 1e3:8.1f}ms {two * 1e3:8.1f}ms "
          f"{two / one:7.2f}")
    if not args.quick:
        write("distributed", "Collectives and DDP",
              "all_reduce of 64 MiB on openreg ranks against CPU tensors on Gloo, in place and "
              "staged, with the staged cost model checked; a DDP training step on two ranks "
              "against one.",
              {"all_reduce_rounds": 7, "all_reduce_iterations": 3, "ddp_steps": 20}, cases,
              args.results, argv)


if __name__ == "__main__":
    main()

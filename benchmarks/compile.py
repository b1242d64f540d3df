"""torch.compile benchmarks: compiled openreg against eager openreg and compiled CPU, one run.

    python benchmarks/compile.py            # full run (compiles take minutes the first time)
    python benchmarks/compile.py --quick    # few iterations, to check the harness works

Rounds alternate between the two sides of each ratio so both see the same machine; each
side's timed loop ends with torch.openreg.synchronize(), so queued kernels are paid for.
Compiled openreg against compiled CPU runs each side in a process of its own, as models.py and
ops.py do: in one process, the CPU side's OpenMP threads spin for milliseconds after each of
its rounds and take a core from the device round that follows (ops.Side). Eager against
compiled openreg is one device, in this process.
Inductor's compiled code is cached in TORCHINDUCTOR_CACHE_DIR (default: a per-user temp dir).
A full run (not --quick) writes benchmarks/results/compile.json (benchmarks/record.py).
"""

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ops  # noqa: E402  (its Side: a side's process, and the wait for its threads to go idle)
from record import add_results_option, ratio_case, write  # noqa: E402
from run import add_side_options, start_openreg, use_kernel_threads  # noqa: E402


def cnn() -> nn.Module:
    """The CNN of examples/compile.py (and small_cnn of examples/device_kernels.py)."""
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Dropout(0.0), nn.Linear(32, 10))


def seconds(fn: Callable[[], object], iterations: int) -> float:
    start = time.perf_counter()
    for _ in range(iterations):
        fn()
    torch.openreg.synchronize()
    return (time.perf_counter() - start) / iterations


def ratio(numerator: Callable[[], object], denominator: Callable[[], object], iterations: int,
          rounds: int) -> tuple[float, float, list[float]]:
    """(numerator s, denominator s: medians, and each round's numerator/denominator)."""
    for fn in (numerator, denominator):
        for _ in range(3):
            fn()
    torch.openreg.synchronize()
    num, den, ratios = [], [], []
    for _ in range(rounds):
        num.append(seconds(numerator, iterations))
        den.append(seconds(denominator, iterations))
        ratios.append(num[-1] / den[-1])
    return statistics.median(num), statistics.median(den), ratios


def fused_chain(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    y = x * torch.sigmoid(x) + b
    return nn.functional.layer_norm(y, y.shape[-1:])


def training_step(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return loss


def jobs(device: str) -> dict[str, Callable[[], object]]:
    """The compiled work of each cross-device case, built on `device` from the same seed."""
    torch.manual_seed(0)
    x, b = torch.randn(4096, 1024), torch.randn(1024)  # 4 M floats
    inputs, targets = torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))
    torch.manual_seed(0)
    model = cnn().to(device)
    x, b, inputs, targets = (t.to(device) for t in (x, b, inputs, targets))
    chain, step = torch.compile(fused_chain), torch.compile(training_step)
    return {"chain": lambda: chain(x, b), "cnn": lambda: step(model, inputs, targets)}


def serve(device: str, kernel_threads: int | None) -> None:
    """A side's process: `JOB N` answers the seconds a call takes over N calls, after 3 untimed
    calls (the first compiles)."""
    start_openreg()  # on both sides: the CPU side's host allocator must match openreg's
    if device == "openreg":
        use_kernel_threads(kernel_threads)
    work = jobs(device)
    for line in sys.stdin:
        name, count = line.split()
        for _ in range(3):
            work[name]()
        torch.openreg.synchronize()  # the untimed calls end before the timed ones start
        print(repr(seconds(work[name], int(count))), flush=True)


class Side(ops.Side):
    """One side of the cross-device cases, in a process of its own (`compile.py --serve`)."""

    def __init__(self, device: str, kernel_threads: int | None) -> None:
        super().__init__(device, kernel_threads, script=os.path.abspath(__file__))

    def seconds(self, job: str, iterations: int) -> float:
        return float(self.question(f"{job} {iterations}"))


def cross_device(job: str, sides: dict, iterations: int,
                 rounds: int) -> tuple[float, float, list[float]]:
    """(openreg s, CPU s: medians, and each round's openreg/CPU), which side first alternating."""
    times: dict[str, list[float]] = {"cpu": [], "openreg": []}
    for r in range(rounds):
        for device in (("cpu", "openreg") if r % 2 == 0 else ("openreg", "cpu")):
            times[device].append(sides[device].seconds(job, iterations))
    ratios = [d / c for c, d in zip(times["cpu"], times["openreg"])]
    return statistics.median(times["openreg"]), statistics.median(times["cpu"]), ratios


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    add_side_options(parser)
    add_results_option(parser)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.kernel_threads)
        return
    rounds, iterations = (2, 2) if args.quick else (9, 10)
    print(f"{'case':44} {'a':>10} {'b':>10} {'a/b':>6} {'target':>8}")

    torch.manual_seed(0)
    x, b = torch.randn(4096, 1024), torch.randn(1024)  # 4 M floats
    dx, db = x.to("openreg"), b.to("openreg")
    chain_dev = torch.compile(fused_chain)
    assert torch.allclose(chain_dev(dx, db).cpu(), fused_chain(x, b), atol=1e-4)
    measured = [("chain 4M: eager openreg / compiled openreg", [1.5, None],
                 ratio(lambda: fused_chain(dx, db), lambda: chain_dev(dx, db), iterations,
                       rounds))]
    sides = {"cpu": Side("cpu", None), "openreg": Side("openreg", args.kernel_threads)}
    try:
        measured.append(("chain 4M: compiled openreg / compiled CPU", 1.1,
                         cross_device("chain", sides, iterations, rounds)))
        measured.append(("CNN training step: compiled openreg / CPU", 1.1,
                         cross_device("cnn", sides, iterations, rounds)))
    finally:
        for side in sides.values():
            side.close()

    recorded = []
    for name, target, (a, b_, ratios) in measured:
        recorded.append(ratio_case(name, ratios, target))
        shown = f">= {target[0]}" if isinstance(target, list) else f"<= {target}"
        print(f"{name:44} {a * 1e3:8.2f}ms {b_ * 1e3:8.2f}ms {recorded[-1]['ratio']:6.2f} "
              f"{shown:>8}", flush=True)
    if not args.quick:
        write("compile", "torch.compile",
              "A fused elementwise chain and a CNN training step under torch.compile on openreg, "
              "against eager openreg and against the compiled CPU (each side in a process of "
              "its own).",
              {"rounds": rounds, "iterations": iterations}, recorded, args.results, argv)


if __name__ == "__main__":
    main()

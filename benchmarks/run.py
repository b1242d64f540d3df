"""Benchmarks: openreg against native CPU on the same work, in one run, reported as ratios.

    python benchmarks/run.py            # full run (about a minute)
    python benchmarks/run.py --quick    # a few iterations, to check the harness works

Each case times a loop of the same operation on CPU tensors and on openreg
tensors; openreg's loop ends with a synchronize, so queued kernels are paid
for. The median of several repeats is reported, and ratio = openreg / CPU
(lower is better; 1.00 means as fast as native CPU).
"""

import argparse
import statistics
import time
from dataclasses import dataclass
from typing import Callable

import torch


@dataclass
class Case:
    name: str
    cpu: Callable[[], object]
    device: Callable[[], object]
    iterations: int
    target: float | None  # the upper bound for the ratio, if any


def per_call_seconds(fn: Callable[[], object], sync: Callable[[], None], iterations: int,
                     repeats: int) -> float:
    for _ in range(max(2, iterations // 10)):
        fn()
    sync()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(iterations):
            fn()
        sync()
        samples.append((time.perf_counter() - start) / iterations)
    return statistics.median(samples)


def cases() -> list[Case]:
    out = []
    # (a) dispatch overhead: a tiny elementwise op.
    a, b = torch.randn(64), torch.randn(64)
    da, db = a.to("openreg"), b.to("openreg")
    out.append(Case("add, 64 floats", lambda: a + b, lambda: da + db, 20000, 1.3))
    c, dc = torch.empty(64), torch.empty(64, device="openreg")
    out.append(Case("add out=, 64 floats", lambda: torch.add(a, b, out=c),
                    lambda: torch.add(da, db, out=dc), 20000, 1.3))

    # (b) throughput: a large elementwise op and a matmul.
    n = 16 * 1024 * 1024
    la, lb, lc = torch.randn(n), torch.randn(n), torch.empty(n)
    dla, dlb, dlc = la.to("openreg"), lb.to("openreg"), lc.to("openreg")
    out.append(Case("add, 16M floats", lambda: la + lb, lambda: dla + dlb, 10, 1.05))
    out.append(Case("add out=, 16M floats", lambda: torch.add(la, lb, out=lc),
                    lambda: torch.add(dla, dlb, out=dlc), 10, 1.05))
    ma, mb = torch.randn(512, 512), torch.randn(512, 512)
    dma, dmb = ma.to("openreg"), mb.to("openreg")
    out.append(Case("matmul 512x512", lambda: ma @ mb, lambda: dma @ dmb, 100, 1.05))

    # (c) host<->device copies against a CPU copy of the same bytes (64 MiB).
    src, dst = torch.randn(n), torch.empty(n)
    dev = torch.empty(n, device="openreg")
    out.append(Case("copy 64 MiB host->device", lambda: dst.copy_(src), lambda: dev.copy_(src),
                    10, 1.25))
    out.append(Case("copy 64 MiB device->host", lambda: dst.copy_(src), lambda: dst.copy_(dev),
                    10, 1.25))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few iterations: checks, not numbers")
    args = parser.parse_args()
    repeats = 1 if args.quick else 7
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads")
    print(f"{'case':28} {'cpu':>12} {'openreg':>12} {'ratio':>7} {'target':>7}")
    for case in cases():
        iterations = 2 if args.quick else case.iterations
        cpu = per_call_seconds(case.cpu, lambda: None, iterations, repeats)
        dev = per_call_seconds(case.device, torch.openreg.synchronize, iterations, repeats)
        target = f"<={case.target:.2f}" if case.target else ""
        print(f"{case.name:28} {cpu * 1e6:10.2f}us {dev * 1e6:10.2f}us {dev / cpu:7.2f} {target:>7}")


if __name__ == "__main__":
    main()

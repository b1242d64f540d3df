"""Which side sets the pace of an operator: the host's call or the device's kernel.

    python benchmarks/pace.py --size 1K -k eq      # operators whose name contains "eq"
    python benchmarks/pace.py --kernel-threads 2   # every operator of benchmarks/ops.py

The host queues a kernel and returns; the device's thread runs it. In a loop of calls the
slower of the two sets the time per call. For each operator of `benchmarks/ops.py`, on the
device only, this times `--calls` calls as the host issues them (`host`) and until the device
has run them all (`whole`): when `whole` is well above `host`, the device's side of the
operator is the one to make cheaper (its kernel, or what the kernel does before its loop);
when they are equal, the host's (the dispatcher, allocation, the launch). The calls fit in the
stream's queue, so the host never waits for room. Medians of `--rounds` rounds, in µs a call.
A run of every operator writes benchmarks/results/pace.json (benchmarks/record.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ops import OPS, SIZES  # noqa: E402  (the operators and sizes of the per-operator benchmark)
from record import add_results_option, value_case, write  # noqa: E402
from run import add_kernel_threads_option, use_kernel_threads  # noqa: E402


def pace(fn, calls: int, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds a call of each round: as the host issues `calls` calls, and until the device ran
    them."""
    for _ in range(3):  # warm up caches and allocators
        for _ in range(calls):
            fn()
        torch.openreg.synchronize()
    host, whole = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        issued = time.perf_counter()
        torch.openreg.synchronize()
        done = time.perf_counter()
        host.append((issued - start) / calls)
        whole.append((done - start) / calls)
    return host, whole


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="1K")
    parser.add_argument("-k", dest="contains", default="", help="only operators containing this")
    parser.add_argument("--calls", type=int, default=400, help="calls a round (default 400)")
    parser.add_argument("--rounds", type=int, default=15, help="rounds (default 15)")
    add_kernel_threads_option(parser)
    add_results_option(parser)
    args = parser.parse_args(argv)
    if args.calls < 1:
        parser.error("--calls must be positive")
    if args.rounds < 1:
        parser.error("--rounds must be positive")
    use_kernel_threads(args.kernel_threads)
    names = [name for name in OPS if args.contains in name]
    print(f"torch {torch.__version__}; openreg kernels on {torch.openreg.get_kernel_threads()} "
          f"threads, host {torch.get_num_threads()}; {args.size}, {args.calls} calls a round")
    print(f"{'operator':24} {'host':>8} {'whole':>8}  pace set by")
    cases = []
    for name in names:
        hosts, wholes = pace(OPS[name](SIZES[args.size], "openreg"), args.calls, args.rounds)
        host, whole = statistics.median(hosts), statistics.median(wholes)
        side = "device" if whole > 1.2 * host else "host"
        print(f"{name:24} {host * 1e6:7.2f}us {whole * 1e6:7.2f}us  {side}", flush=True)
        cases.append(value_case(name, [w * 1e6 for w in wholes], "µs a call",
                                note=f"host {host * 1e6:.2f} µs a call: pace set by the {side}"))
    if not args.contains:  # a run of every operator
        write("pace", "Which side sets an operator's pace",
              "Each operator of the per-operator benchmark on openreg alone: the time a call "
              "takes until the device ran it, and the host's share of it.",
              {"size": args.size, "calls": args.calls, "rounds": args.rounds,
               "kernel_threads": torch.openreg.get_kernel_threads(),
               "host_threads": torch.get_num_threads()}, cases, args.results, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

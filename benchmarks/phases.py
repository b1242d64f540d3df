"""How the cost of a kernel launch moves over time on this machine, against the CPU's.

    python benchmarks/phases.py                 # 60 seconds
    python benchmarks/phases.py --seconds 180

On openreg a small operator costs what it costs on the CPU up to our kernel (Python, the
dispatcher, autograd's layers), then the launch: the device guard, the stream, the queue that
the device's thread reads on the other core. This takes three measurements in turn, in short
windows (`--calls` calls each), for `--seconds`: the CPU's `zero_` of 1,024 floats; openreg's
`zero_` of an empty tensor (our operator returns before the guard: everything but the launch);
and openreg's `zero_` of 1,024 floats (the same with a launch). The launch's cost in a window
is the difference of the last two. It prints each measurement's fastest tenth, median and
slowest tenth, in µs a call, and then splits the windows into those where the launch cost
no more than `--slow` times its fastest tenth and the others ("slow"), with the medians of
each part: whether the CPU and the dispatcher slowed down with the launch, or the launch alone.
Each run writes benchmarks/results/phases.json (benchmarks/record.py; `--results DIR` elsewhere).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record import add_results_option, ratio_case, value_case, write  # noqa: E402


def per_call(fn, calls: int, finish=None) -> float:
    """Seconds a call of `calls` calls of fn; `finish` (a synchronize) ends the window."""
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    if finish is not None:
        finish()
    return (time.perf_counter() - start) / calls


def windows(seconds: float, calls: int) -> list[dict[str, float]]:
    """Windows of the three measurements in turn, for `seconds` (one at least); µs a call."""
    on_cpu = torch.randn(1024)
    empty = torch.empty(0, device="openreg")
    on_device = torch.randn(1024, device="openreg")
    sync = torch.openreg.synchronize
    per_call(on_device.zero_, calls, sync)  # warm up: the stream's thread and queue exist
    rows = []
    end = time.perf_counter() + seconds
    while not rows or time.perf_counter() < end:
        cpu = per_call(on_cpu.zero_, calls)
        dispatch = per_call(empty.zero_, calls, sync)
        launch = per_call(on_device.zero_, calls, sync)
        rows.append({"cpu": cpu * 1e6, "dispatch": dispatch * 1e6, "with launch": launch * 1e6,
                     "launch": (launch - dispatch) * 1e6})
    return rows


def tenth(values: list[float], which: int) -> float:
    """The fastest (which=1) or slowest (which=9) tenth's edge of values."""
    return statistics.quantiles(values, n=10)[which - 1] if len(values) > 1 else values[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long (default 60)")
    parser.add_argument("--calls", type=int, default=20000, help="calls a window (default 20000)")
    parser.add_argument("--slow", type=float, default=1.5,
                        help="a window is slow when its launch costs more than this times the "
                             "fastest tenth's (default 1.5)")
    add_results_option(parser)
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    if args.calls < 1:
        parser.error("--calls must be positive")
    rows = windows(args.seconds, args.calls)
    names = list(rows[0])
    print(f"torch {torch.__version__}; zero_ of 1,024 floats; {len(rows)} windows of "
          f"{args.calls} calls in {args.seconds:g} s; µs a call")
    print(f"{'':12} {'fastest 10%':>12} {'median':>8} {'slowest 10%':>12}")
    for name in names:
        values = [row[name] for row in rows]
        print(f"{name:12} {tenth(values, 1):12.3f} {statistics.median(values):8.3f} "
              f"{tenth(values, 9):12.3f}")
    fast_launch = tenth([row["launch"] for row in rows], 1)
    slow = [row for row in rows if row["launch"] > args.slow * fast_launch]
    fast = [row for row in rows if row["launch"] <= args.slow * fast_launch]
    print(f"slow windows (launch > {args.slow:g} x {fast_launch:.3f}): {len(slow)} of {len(rows)}")
    for label, part in (("fast", fast), ("slow", slow)):
        if part:
            medians = "  ".join(f"{name} {statistics.median(row[name] for row in part):.3f}"
                                for name in names)
            ratio = statistics.median(row["with launch"] / row["cpu"] for row in part)
            print(f"{label}: {medians}  openreg/cpu {ratio:.2f}")
    cases = [value_case(f"zero_ of 1,024 floats: {name}", [row[name] for row in rows],
                        "µs a call") for name in names]
    cases.append(ratio_case("zero_ of 1,024 floats: openreg / CPU",
                            [row["with launch"] / row["cpu"] for row in rows]))
    cases.append({"name": "slow windows", "value": len(slow), "unit": f"of {len(rows)} windows",
                  "spread": None, "rounds": len(rows), "target": None,
                  "note": f"launch above {args.slow:g} × its fastest tenth"})
    write("phases", "Launch cost over time",
          "Short windows of a small operator in turn, for a minute: the CPU's call, openreg's "
          "call without a launch, and with one; the launch's cost is their difference.",
          {"seconds": args.seconds, "calls": args.calls, "slow": args.slow}, cases,
          args.results, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Backward on openreg: what autograd's device thread costs, and what that cost depends on.

    python benchmarks/autograd_thread.py                    # conv2d backward at 1K, 30 rounds
    python benchmarks/autograd_thread.py --kernel-threads 2
    python benchmarks/autograd_thread.py --gap-ms 0         # rounds back to back

PyTorch's autograd engine computes the gradients of an accelerator's tensors on a worker thread
of its own per device (`pt_autograd_0`, ...; CUDA's too), not on the thread that called
`backward()` or `torch.autograd.grad`: every backward pass is handed to that thread and its end
handed back. This program times one backward pass of `benchmarks/ops.py` (`conv2d backward`:
`torch.autograd.grad` of a 3 x 3 convolution) on openreg in three ways, in alternating rounds of
one process:

- `engine thread`: as users call it, the pass runs on autograd's thread for openreg:0;
- `caller thread`: inside `torch.autograd.set_multithreading_enabled(False)`, PyTorch's switch
  that keeps the whole pass on the calling thread;
- `kernel only`: `convolution_backward` called directly, the kernel the pass launches.

Each round is `--calls` calls and a synchronize, in µs a call. Between rounds the process sleeps
`--gap-ms` (default 10 ms, about one round of the other side in `benchmarks/ops.py`), so that its
threads start each round asleep, as they do there; `--gap-ms 0` shows the same calls with every
thread kept awake by the rounds before. Each run writes benchmarks/results/autograd_thread.json
(benchmarks/record.py; `--results DIR` elsewhere).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ops import OPS, SIZES, _side  # noqa: E402  (the operators and sizes of benchmarks/ops.py)
from record import add_results_option, ratio_case, value_case, write  # noqa: E402
from run import add_kernel_threads_option, use_kernel_threads  # noqa: E402


def per_call(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.openreg.synchronize()
    return (time.perf_counter() - start) / calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="1K")
    parser.add_argument("--calls", type=int, default=200, help="calls a round (default 200)")
    parser.add_argument("--rounds", type=int, default=30, help="rounds of each way (default 30)")
    parser.add_argument("--gap-ms", type=float, default=10.0, help="sleep between rounds")
    add_kernel_threads_option(parser)
    add_results_option(parser)
    args = parser.parse_args(argv)
    if args.calls < 1 or args.rounds < 1 or args.gap_ms < 0:
        parser.error("--calls and --rounds must be positive, --gap-ms not negative")
    use_kernel_threads(args.kernel_threads)

    # LITERALINCLUDE START: AUTOGRAD_THREAD_WAYS
    n = SIZES[args.size]
    backward = OPS["conv2d backward"](n, "openreg")  # torch.autograd.grad of F.conv2d
    side = max(4, _side(n // 16))  # the input's side in ops.py's conv2d
    x = torch.randn(1, 16, side, side, device="openreg")
    w = torch.randn(16, 16, 3, 3, device="openreg")
    grad = torch.ones(1, 16, side, side, device="openreg")

    def on_caller_thread():
        with torch.autograd.set_multithreading_enabled(False):
            return backward()

    def kernel_only():
        return torch.ops.aten.convolution_backward(grad, x, w, [16], [1, 1], [1, 1], [1, 1], False,
                                                   [0, 0], 1, [True, True, False])

    ways = {"engine thread": backward, "caller thread": on_caller_thread,
            "kernel only": kernel_only}
    for fn in ways.values():  # warm up: starts autograd's threads, fills the allocator's cache
        per_call(fn, max(2, args.calls // 10))
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.rounds):
        for name, fn in ways.items():
            time.sleep(args.gap_ms / 1000)
            times[name].append(per_call(fn, args.calls))
    # LITERALINCLUDE END: AUTOGRAD_THREAD_WAYS

    print(f"torch {torch.__version__}; openreg kernels on {torch.openreg.get_kernel_threads()} "
          f"threads, host {torch.get_num_threads()}; conv2d backward at {args.size}, "
          f"{args.rounds} rounds of {args.calls} calls, {args.gap_ms:g} ms apart")
    print(f"{'way':16} {'median':>9} {'best':>9} {'worst':>9}")
    for name, values in times.items():
        print(f"{name:16} {statistics.median(values) * 1e6:7.1f}us {min(values) * 1e6:7.1f}us "
              f"{max(values) * 1e6:7.1f}us")
    engine = statistics.median(times["engine thread"])
    caller = statistics.median(times["caller thread"])
    print(f"the hand-over to autograd's thread and back: {(engine - caller) * 1e6:.1f}us a pass "
          f"(engine thread / caller thread: {engine / caller:.2f})")
    cases = [value_case(f"conv2d backward at {args.size}, {name}", [t * 1e6 for t in values],
                        "µs a call") for name, values in times.items()]
    cases.append(ratio_case("engine thread / caller thread",
                            [e / c for e, c in zip(times["engine thread"], times["caller thread"])],
                            note="what handing the pass to autograd's thread and back costs"))
    write("autograd_thread", "Autograd's device thread",
          "One backward pass of a small convolution on openreg, on autograd's thread for the "
          "device, on the calling thread, and the backward kernel alone.",
          {"size": args.size, "calls": args.calls, "rounds": args.rounds, "gap_ms": args.gap_ms,
           "kernel_threads": torch.openreg.get_kernel_threads(),
           "host_threads": torch.get_num_threads()}, cases, args.results, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

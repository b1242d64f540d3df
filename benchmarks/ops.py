"""Per-operator benchmark: the operators real models call, openreg against native CPU.

    python benchmarks/ops.py                 # every operator at 1K and 1M (a few minutes)
    python benchmarks/ops.py --quick         # a few iterations: checks the harness, not numbers
    python benchmarks/ops.py --size 1K -k sum   # one size, operators whose name contains "sum"
    python benchmarks/ops.py --cpu-vs-cpu    # both sides on the CPU: checks the harness itself
    python benchmarks/ops.py --kernel-threads 1   # the device's kernels on one thread

The operators are what a CNN, a transformer block, an LSTM and an AMP step dispatch (docs/tools.md,
dispatch tracing), plus indexing and reductions, at about 1,024 and 1,048,576 elements. Each side
runs in a process of its own (in one, the device's OpenMP threads and the CPU side's slow each
other); the harness asks them for rounds in turn, which side goes first alternating, and an
operator's ratio is the median of its per-round ratios (openreg / CPU). The rounds are spread
over passes over the list, since the machine has slow phases lasting seconds, and the passes go
in turn to pairs of side processes, since a process can be slower at one operator for its whole
life. `worst` is the highest median of one pass; the last lines give the geometric means and the
operators over target. A whole run writes benchmarks/results/ops.json (benchmarks/record.py).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record import add_results_option, geomean_case, ratio_case, write  # noqa: E402
from run import (  # noqa: E402
    add_side_options, running_threads, seconds_per_call, start_openreg,
    use_kernel_threads)

SIZES = {"1K": 1 << 10, "1M": 1 << 20}
TARGETS = {"1K": 1.3, "1M": 1.1}  # the highest ratio an operator may have, per size
GEOMEAN_TARGETS = {"1K": 1.1}  # the highest geometric mean of the ratios, per size

# name -> make(n, device) returning a no-argument callable doing the operation once on
# tensors of about n elements placed on `device`.
Maker = Callable[[int, str], Callable[[], object]]


def _side(n: int) -> int:
    return max(2, int(round(math.sqrt(n))))


def _unary(fn: Callable[[torch.Tensor], object], positive: bool = False) -> Maker:
    def make(n: int, device: str):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(n, generator=g)
        x = (x.abs() + 0.1 if positive else x).to(device)
        return lambda: fn(x)
    return make


def _binary(fn: Callable[[torch.Tensor, torch.Tensor], object]) -> Maker:
    def make(n: int, device: str):
        g = torch.Generator().manual_seed(0)
        x, y = torch.randn(n, generator=g).to(device), torch.randn(n, generator=g).to(device)
        return lambda: fn(x, y)
    return make


def _matrix(fn: Callable[[torch.Tensor], object]) -> Maker:
    """fn on a (rows, 64) matrix of about n elements (rows of a batch, features of a layer)."""
    def make(n: int, device: str):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(max(1, n // 64), 64, generator=g).to(device)
        return lambda: fn(x)
    return make


def _square(fn: Callable[[torch.Tensor, torch.Tensor], object]) -> Maker:
    """fn on two square matrices of about n elements each."""
    def make(n: int, device: str):
        s = _side(n)
        g = torch.Generator().manual_seed(0)
        a, b = torch.randn(s, s, generator=g).to(device), torch.randn(s, s, generator=g).to(device)
        return lambda: fn(a, b)
    return make


def _images(fn: Callable[[torch.Tensor], object], channels: int = 16) -> Maker:
    """fn on an (N, C, H, W) batch of about n elements."""
    def make(n: int, device: str):
        side = max(4, _side(n // channels))
        g = torch.Generator().manual_seed(0)
        x = torch.randn(1, channels, side, side, generator=g).to(device)
        return lambda: fn(x)
    return make


def _conv(backward: bool) -> Maker:
    def make(n: int, device: str):
        side = max(4, _side(n // 16))
        g = torch.Generator().manual_seed(0)
        x = torch.randn(1, 16, side, side, generator=g).to(device)
        w = torch.randn(16, 16, 3, 3, generator=g).to(device)
        if not backward:
            return lambda: F.conv2d(x, w, padding=1)
        x.requires_grad_(True)
        w.requires_grad_(True)
        y = F.conv2d(x, w, padding=1)
        grad = torch.ones_like(y)
        return lambda: torch.autograd.grad(y, (x, w), grad, retain_graph=True)
    return make


def _indexing(kind: str) -> Maker:
    def make(n: int, device: str):
        g = torch.Generator().manual_seed(0)
        rows = max(2, n // 64)
        x = torch.randn(rows, 64, generator=g).to(device)
        idx = torch.randint(0, rows, (rows,), generator=g).to(device)
        idx2 = torch.randint(0, 64, (rows, 64), generator=g).to(device)
        src = torch.randn(rows, 64, generator=g).to(device)
        mask = (torch.randn(rows, 64, generator=g) > 0).to(device)
        weight = torch.randn(rows, 64, generator=g).to(device)
        return {
            "index_select": lambda: x.index_select(0, idx),
            "index (tensor)": lambda: x[idx],
            "gather": lambda: x.gather(1, idx2),
            "scatter_add": lambda: torch.zeros_like(x).scatter_add_(1, idx2, src),
            "index_put_": lambda: x.index_put_((idx,), src, accumulate=True),
            "masked_fill": lambda: x.masked_fill(mask, 0.0),
            "embedding": lambda: F.embedding(idx, weight),
            "masked_select": lambda: x.masked_select(mask),
            "nonzero": lambda: mask.nonzero(),
            "index (bool mask)": lambda: x[mask],
        }[kind]
    return make


def _cross_entropy(n: int, device: str):
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(max(1, n // 16), 16, generator=g).to(device)
    target = torch.randint(0, 16, (logits.shape[0],), generator=g).to(device)
    return lambda: F.cross_entropy(logits, target)


def _batch_norm(n: int, device: str):
    g = torch.Generator().manual_seed(0)
    side = max(2, _side(n // 16))
    x = torch.randn(4, 16, side // 2 or 1, side // 2 or 1, generator=g).to(device)
    mean, var = torch.zeros(16, device=device), torch.ones(16, device=device)
    return lambda: F.batch_norm(x, mean, var, training=True)


def _lstm_cell(n: int, device: str):
    g = torch.Generator().manual_seed(0)
    gates = torch.randn(max(1, n // 256), 256, generator=g).to(device)
    c = torch.randn(gates.shape[0], 64, generator=g).to(device)

    def cell():
        i, f, gg, o = gates.chunk(4, 1)
        c2 = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
        return torch.sigmoid(o) * torch.tanh(c2)
    return cell


def _foreach(kind: str) -> Maker:
    def make(n: int, device: str):
        g = torch.Generator().manual_seed(0)
        params = [torch.randn(n // 4, generator=g).to(device) for _ in range(4)]
        grads = [torch.randn(n // 4, generator=g).to(device) for _ in range(4)]
        return {
            "_foreach_add_": lambda: torch._foreach_add_(params, grads, alpha=0.0),
            "_foreach_mul_": lambda: torch._foreach_mul_(params, 1.0),
        }[kind]
    return make


def _amp_unscale(n: int, device: str):
    g = torch.Generator().manual_seed(0)
    grads = [torch.randn(n // 4, generator=g).to(device) for _ in range(4)]
    found = torch.zeros(1, device=device)
    inv = torch.ones(1, device=device)
    return lambda: torch._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)


OPS: dict[str, Maker] = {
    # elementwise, unary (activations of every model; the optimizer's sqrt)
    "relu": _unary(torch.relu), "relu_": _unary(lambda x: x.relu_()),
    "gelu": _unary(F.gelu), "silu": _unary(F.silu), "sigmoid": _unary(torch.sigmoid),
    "tanh": _unary(torch.tanh), "exp": _unary(torch.exp), "log": _unary(torch.log, positive=True),
    "sqrt": _unary(torch.sqrt, positive=True), "rsqrt": _unary(torch.rsqrt, positive=True),
    "neg": _unary(torch.neg), "abs": _unary(torch.abs), "sin": _unary(torch.sin),
    "pow (scalar)": _unary(lambda x: x.pow(2)), "clamp": _unary(lambda x: x.clamp(-0.5, 0.5)),
    "leaky_relu": _unary(F.leaky_relu), "dropout": _unary(lambda x: F.dropout(x, 0.1)),
    "to half": _unary(lambda x: x.half()), "clone": _unary(torch.clone),
    "zero_": _unary(lambda x: x.zero_()), "fill_": _unary(lambda x: x.fill_(1.5)),
    "isfinite": _unary(torch.isfinite),
    # elementwise, binary and ternary
    "add": _binary(torch.add), "mul": _binary(torch.mul), "sub": _binary(torch.sub),
    "div": _binary(torch.div), "add (scalar)": _unary(lambda x: x + 1.0),
    "mul (scalar)": _unary(lambda x: x * 0.5), "maximum": _binary(torch.maximum),
    "gt": _binary(torch.gt), "eq": _binary(torch.eq),
    "where": _binary(lambda x, y: torch.where(x > 0, x, y)),
    "addcmul_": _binary(lambda x, y: x.addcmul_(y, y, value=0.0)),
    "lerp_": _binary(lambda x, y: x.lerp_(y, 0.0)),
    "threshold_backward": _binary(lambda x, y: torch.ops.aten.threshold_backward(x, y, 0.0)),
    # reductions, scans and sorting
    "sum": _unary(torch.sum), "sum(dim)": _matrix(lambda x: x.sum(1)), "mean": _unary(torch.mean),
    "mean(dim)": _matrix(lambda x: x.mean(1)), "amax": _matrix(lambda x: x.amax(1)),
    "argmax": _unary(torch.argmax), "max(dim)": _matrix(lambda x: x.max(1)),
    "var": _matrix(lambda x: x.var(1)), "norm": _unary(torch.linalg.vector_norm),
    "cumsum": _unary(lambda x: x.cumsum(0)), "all": _unary(lambda x: (x > -100).all()),
    "topk": _matrix(lambda x: x.topk(4, 1)), "sort": _matrix(lambda x: x.sort(1)),
    # softmax, normalization, losses
    "softmax": _matrix(lambda x: x.softmax(1)), "log_softmax": _matrix(lambda x: x.log_softmax(1)),
    "layer_norm": _matrix(lambda x: F.layer_norm(x, (64,))), "batch_norm": _batch_norm,
    "cross_entropy": _cross_entropy, "mse_loss": _binary(F.mse_loss),
    # matrix products, convolution, pooling
    "mm": _square(torch.mm), "addmm": _square(lambda a, b: torch.addmm(b, a, b)),
    "bmm": _square(lambda a, b: torch.bmm(a.unsqueeze(0), b.unsqueeze(0))),
    "conv2d": _conv(backward=False), "conv2d backward": _conv(backward=True),
    "max_pool2d": _images(lambda x: F.max_pool2d(x, 2)),
    "avg_pool2d": _images(lambda x: F.avg_pool2d(x, 2)),
    # joining, indexing, data-dependent shapes
    "cat": _binary(lambda x, y: torch.cat([x, y])),
    "stack": _binary(lambda x, y: torch.stack([x, y])),
    "contiguous (transpose)": _square(lambda a, b: a.t().contiguous()),
    "index_select": _indexing("index_select"), "index (tensor)": _indexing("index (tensor)"),
    "gather": _indexing("gather"), "scatter_add": _indexing("scatter_add"),
    "index_put_": _indexing("index_put_"), "masked_fill": _indexing("masked_fill"),
    "embedding": _indexing("embedding"), "masked_select": _indexing("masked_select"),
    "nonzero": _indexing("nonzero"), "index (bool mask)": _indexing("index (bool mask)"),
    # LSTM cell and optimizer / AMP steps
    "lstm cell (pointwise)": _lstm_cell, "_foreach_add_": _foreach("_foreach_add_"),
    "_foreach_mul_": _foreach("_foreach_mul_"), "amp unscale": _amp_unscale,
}


def iterations_for(fn: Callable[[], object], budget: float) -> int:
    """How many calls of fn take about `budget` seconds on the CPU, at its steady rate: the
    fastest of eight windows of a quarter of the budget. The first milliseconds of a new
    operator (fresh memory, cold caches, a machine that was idle) can be several times slower,
    and a count taken there made rounds of a few calls that caught only that phase."""
    per_call = math.inf
    for _ in range(8):
        start, count = time.perf_counter(), 0
        while (time.perf_counter() - start < budget / 4 or count < 2) and count < 100000:
            fn()
            count += 1
        per_call = min(per_call, (time.perf_counter() - start) / count)
    return max(2, min(20000, int(budget / per_call)))


Results = dict[tuple[str, str], tuple[list[float], list[float], list[float], list[float]]]


def run_passes(names: list[str], sizes: list[str], passes: int, rounds: int, quick: bool = False,
               cpu_vs_cpu: bool = False, kernel_threads: int | None = None,
               processes: int = 1) -> tuple[Results, dict[str, set[str]]]:
    """Measures every (operator, size) in `passes` passes over the list, `rounds` alternating
    rounds each. Returns, per (operator, size), the CPU seconds, openreg seconds and ratio of
    every round and the median ratio of each pass; and per operator, those that fell back to
    the CPU. `cpu_vs_cpu` runs the CPU on both sides (every ratio should be near 1.00).
    openreg's kernels get `kernel_threads` threads (default: the backend's). Pass p is
    measured by pair p % `processes` of side processes."""
    threads = kernel_threads or torch.openreg.get_kernel_threads()
    pairs = [(Side("cpu", threads), Side("cpu" if cpu_vs_cpu else "openreg", threads))
             for _ in range(processes)]
    # Each operator's tensors are made once, in each side's process, and kept for every pass,
    # as a model keeps its weights; every pass times the same calls on the same memory.
    iterations: dict[tuple[str, str], int] = {}
    results: Results = {(name, size): ([], [], [], []) for name in names for size in sizes}
    fell_back: dict[str, set[str]] = {name: set() for name in names}
    try:
        for p in range(passes):
            print(f"pass {p + 1} of {passes}", file=sys.stderr, flush=True)
            cpu, dev = pairs[p % processes]
            for name in names:
                for size in sizes:
                    key = (name, size)
                    if key not in iterations:  # ~10 ms a round on the CPU
                        iterations[key] = 2 if quick else int(cpu.ask(name, size, 0)[0])
                    all_cpu, all_dev, all_ratios, per_pass = results[key]
                    ratios = []
                    for r in range(rounds):  # which side goes first alternates
                        if (p * rounds + r) % 2:
                            seconds, fallbacks = dev.ask(name, size, iterations[key])
                            all_cpu.append(float(cpu.ask(name, size, iterations[key])[0]))
                        else:
                            all_cpu.append(float(cpu.ask(name, size, iterations[key])[0]))
                            seconds, fallbacks = dev.ask(name, size, iterations[key])
                        all_dev.append(float(seconds))
                        fell_back[name].update(filter(None, fallbacks.split(",")))
                        ratios.append(all_dev[-1] / all_cpu[-1])
                    all_ratios.extend(ratios)
                    per_pass.append(statistics.median(ratios))
    finally:
        for side in (side for pair in pairs for side in pair):
            side.close()
    return results, fell_back

SETTLE_LIMIT = 0.05     # the longest wait for a side's threads to go idle after a round
SETTLE_SECONDS = 0.01   # the fixed wait instead, where /proc cannot tell (not Linux)


class Side:
    """One side of the comparison, in a process of its own (`ops.py --serve`). The device's
    kernels are OpenMP loops on the device's worker threads: beside the CPU side's own OpenMP
    threads they would make more threads than cores, and libgomp then makes every idle thread
    sleep at once and every parallel loop wake its threads first, on both sides."""

    def __init__(self, device: str, kernel_threads: int | None,
                 script: str = os.path.abspath(__file__)) -> None:
        """`script --serve DEVICE` is the side's process (this file's, or another benchmark's
        that answers its own questions)."""
        self.device = device
        threads = ["--kernel-threads", str(kernel_threads)] if kernel_threads else []
        self.process = subprocess.Popen([sys.executable, script, "--serve", device, *threads],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def question(self, line: str) -> str:
        """The side's one-line answer to `line`, once its threads have gone idle."""
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the {self.device} side of the benchmark exited "
                               f"(code {self.process.wait()}) at: {line}")
        self.settle()
        return answer.rstrip("\n")

    def ask(self, name: str, size: str, iterations: int) -> list[str]:
        """Seconds per call over `iterations` calls and the operators that fell back (or, for
        0 iterations, how many calls take about 10 ms)."""
        return self.question(f"{name}\t{size}\t{iterations}").split("\t")

    def settle(self) -> None:
        """Returns once none of the side's threads runs, or after SETTLE_LIMIT. After a
        parallel loop, idle OpenMP threads spin for milliseconds before they sleep: the other
        side's round must not start while they still take its cores. The wait is busy: an idle
        machine slows down, and the next round would start on a cold one."""
        start = time.perf_counter()
        while time.perf_counter() - start < SETTLE_LIMIT:
            running = running_threads(self.process.pid)
            if running == 0:
                return
            if running is None:  # no /proc: a fixed wait
                while time.perf_counter() - start < SETTLE_SECONDS:
                    pass
                return

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait()


WARM_UP_SECONDS = 0.003  # untimed calls before each round


def warm_up(fn: Callable[[], object], finish: Callable[[], None]) -> None:
    """Calls fn at least twice and for WARM_UP_SECONDS, waiting for each call; a new operator's
    first calls (fresh caches and allocations) happen here, or in iterations_for's first window.
    A side starts a round idle since its last one, and its first calls run several times slower;
    on openreg with two kernel threads a call can take a whole scheduler tick, as an idle OpenMP
    thread spins on the core that the kernel's other thread waits for (libgomp's GOMP_SPINCOUNT).
    A round of a few calls measured that phase rather than the operator."""
    start, count = time.perf_counter(), 0
    while count < 2 or time.perf_counter() - start < WARM_UP_SECONDS:
        fn()
        finish()
        count += 1


def serve(device: str, kernel_threads: int) -> None:
    """The loop of a side's process: answers `Side.ask`, one line per question."""
    warnings.simplefilter("ignore")  # a fallback warning would be printed into the answers
    start_openreg()  # on both sides: the CPU side's host allocator must match openreg's
    if device == "openreg":
        use_kernel_threads(kernel_threads)
    finish = torch.openreg.synchronize if device == "openreg" else (lambda: None)
    calls: dict[tuple[str, str], Callable[[], object]] = {}
    for line in sys.stdin:
        name, size, count = line.rstrip("\n").split("\t")
        iterations = int(count)
        fn = calls.get((name, size))
        if fn is None:
            fn = calls[(name, size)] = OPS[name](SIZES[size], device)
        if iterations == 0:
            print(iterations_for(fn, 0.01), flush=True)
            continue
        warm_up(fn, finish)
        torch.openreg.reset_fallback_counts()
        seconds = seconds_per_call(fn, finish, iterations)
        print(f"{seconds!r}\t{','.join(sorted(torch.openreg.fallback_counts()))}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few iterations: checks, not numbers")
    parser.add_argument("--size", choices=sorted(SIZES), action="append",
                        help="only this size (repeatable); default: all")
    parser.add_argument("-k", dest="contains", default="", help="only operators containing this")
    parser.add_argument("--passes", type=int, default=6, help="passes over the list (default 6)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per pass (default 3)")
    parser.add_argument("--processes", type=int, default=3,
                        help="pairs of side processes, taking the passes in turn (default 3)")
    parser.add_argument("--cpu-vs-cpu", action="store_true",
                        help="both sides on the CPU: every ratio should be near 1.00")
    add_side_options(parser)
    add_results_option(parser)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.kernel_threads)
        return 0
    warnings.simplefilter("ignore")  # a fallback warning would be printed into the table
    sizes = args.size or list(SIZES)
    names = [name for name in OPS if args.contains in name]
    passes, rounds = (1, 1) if args.quick else (args.passes, args.rounds)
    processes = max(1, min(args.processes, passes))
    threads = args.kernel_threads or torch.openreg.get_kernel_threads()
    host = torch.get_num_threads()
    print(f"torch {torch.__version__}, CPU: {host} threads; openreg: kernels "
          f"on {threads}, host {host}; {processes} pair(s) of side processes; {len(names)} "
          f"operators, {passes} passes of {rounds} rounds"
          + (", CPU against CPU" if args.cpu_vs_cpu else ""))
    results, fell_back = run_passes(names, sizes, passes, rounds, args.quick, args.cpu_vs_cpu,
                                    threads, processes)
    print(f"{'operator':24}" + "".join(f" {'cpu ' + s:>10} {'openreg':>10} {'ratio':>6} "
                                       f"{'worst':>6}" for s in sizes) + "  CPU fallback")
    cases: dict[str, list[dict]] = {s: [] for s in sizes}
    for name in names:
        row, fallbacks = f"{name:24}", ", ".join(sorted(fell_back[name]))
        for size in sizes:
            cpu, dev, ratios, per_pass = results[(name, size)]
            cases[size].append(ratio_case(f"{name}, {size}", ratios, TARGETS[size],
                                          fallbacks and f"fell back: {fallbacks}"))
            row += (f" {statistics.median(cpu) * 1e6:8.1f}us {statistics.median(dev) * 1e6:8.1f}us"
                    f" {cases[size][-1]['ratio']:6.2f} {max(per_pass):6.2f}")
        print(row + "  " + fallbacks, flush=True)
    geomeans = [geomean_case(f"geomean, {s}", [case["ratio"] for case in cases[s]],
                             [results[(name, s)][3] for name in names], GEOMEAN_TARGETS.get(s))
                for s in sizes]
    print(f"{'geomean':24}" + "".join(f" {'':21} {g['ratio']:6.2f} {'':6}" for g in geomeans))
    for size in sizes:
        over = [f"{name} {case['ratio']:.2f}" for name, case in zip(names, cases[size])
                if round(case["ratio"], 2) > TARGETS[size]]  # as the table shows it
        print(f"over {TARGETS[size]} at {size}: " + (", ".join(over) or "none"))
    if not (args.quick or args.cpu_vs_cpu or args.contains or args.size):  # whole runs only
        write("ops", "Per-operator speed", f"{len(names)} operators that real models call, "
              "each at about 1,024 and 1,048,576 elements, openreg against native CPU.",
              {"passes": passes, "rounds": rounds, "processes": processes,
               "kernel_threads": threads, "host_threads": host},
              geomeans + cases["1K"] + cases["1M"], args.results, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

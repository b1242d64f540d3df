"""torch.compile benchmarks: compiled openreg against eager openreg and compiled CPU, one run.

    python benchmarks/compile.py            # full run (compiles take minutes the first time)
    python benchmarks/compile.py --quick    # few iterations, to check the harness works

Rounds alternate between the two sides of each ratio so both see the same machine; each
side's timed loop ends with torch.openreg.synchronize(), so queued kernels are paid for.
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
from record import add_results_option, ratio_case, write  # noqa: E402


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    add_results_option(parser)
    args = parser.parse_args(argv)
    rounds, iterations = (2, 2) if args.quick else (9, 10)
    print(f"{'case':44} {'a':>10} {'b':>10} {'a/b':>6} {'target':>8}")

    torch.manual_seed(0)
    x, b = torch.randn(4096, 1024), torch.randn(1024)  # 4 M floats
    dx, db = x.to("openreg"), b.to("openreg")
    chain_cpu, chain_dev = torch.compile(fused_chain), torch.compile(fused_chain)
    assert torch.allclose(chain_dev(dx, db).cpu(), fused_chain(x, b), atol=1e-4)
    cases = [
        ("chain 4M: eager openreg / compiled openreg", lambda: fused_chain(dx, db),
         lambda: chain_dev(dx, db), [1.5, None]),
        ("chain 4M: compiled openreg / compiled CPU", lambda: chain_dev(dx, db),
         lambda: chain_cpu(x, b), 1.1),
    ]

    inputs, targets = torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))
    torch.manual_seed(0)
    model_cpu = cnn()
    model_dev = cnn().to("openreg")
    model_dev.load_state_dict(model_cpu.state_dict())
    dinputs, dtargets = inputs.to("openreg"), targets.to("openreg")
    step_cpu, step_dev = torch.compile(training_step), torch.compile(training_step)
    cases.append(("CNN training step: compiled openreg / CPU",
                  lambda: step_dev(model_dev, dinputs, dtargets),
                  lambda: step_cpu(model_cpu, inputs, targets), 1.1))

    recorded = []
    for name, numerator, denominator, target in cases:
        a, b_, ratios = ratio(numerator, denominator, iterations, rounds)
        recorded.append(ratio_case(name, ratios, target))
        shown = f">= {target[0]}" if isinstance(target, list) else f"<= {target}"
        print(f"{name:44} {a * 1e3:8.2f}ms {b_ * 1e3:8.2f}ms {recorded[-1]['ratio']:6.2f} "
              f"{shown:>8}", flush=True)
    if not args.quick:
        write("compile", "torch.compile",
              "A fused elementwise chain and a CNN training step under torch.compile on openreg, "
              "against eager openreg and against the compiled CPU.",
              {"rounds": rounds, "iterations": iterations}, recorded, args.results, argv)


if __name__ == "__main__":
    main()

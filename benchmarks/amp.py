"""Benchmark: an autocast training step on openreg against the CPU's autocast step.

    python benchmarks/amp.py            # full run (a few minutes)
    python benchmarks/amp.py --quick    # one short round, to check the harness works

openreg runs the step under torch.autocast("openreg") in bfloat16, and in float16 with
torch.amp.GradScaler (CUDA's usual recipe). Each is compared with the CPU doing the same
work: the same dtype under torch.autocast("cpu"), the same GradScaler for float16. Two more
rows put the float16 step next to what this machine's CPU runs fast: its bfloat16 step (the
CPU has bfloat16 instructions but no float16 arithmetic, so openreg's float16 kernels
compute in float32, as CUDA's accumulate) and its float32 step (the arithmetic those kernels
actually do). Rounds alternate CPU and openreg; each ratio is the median of the per-round
ratios (openreg / CPU; lower is better). The target for the same-work rows is <= 1.20.
"""

import argparse

import torch
import torch.nn as nn
from run import compare


def cnn() -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64 * 8 * 8, 10))


def block() -> nn.Module:
    return nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, dropout=0.0,
                                      batch_first=True)


# LITERALINCLUDE START: AMP_BENCHMARK_STEP
def training_step(make, inputs, targets, loss_fn, device, dtype):
    """One optimizer step under autocast, as a closure; float16 brings a GradScaler.
    dtype float32 is the plain float32 step (autocast disabled)."""
    torch.manual_seed(0)
    model = make().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler(device, enabled=dtype == torch.float16)
    x, y = inputs.to(device), targets.to(device)
    mixed = dtype != torch.float32

    def step():
        optimizer.zero_grad()
        with torch.autocast(device, dtype=dtype, enabled=mixed):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

    return step
# LITERALINCLUDE END: AMP_BENCHMARK_STEP


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few iterations: checks, not numbers")
    args = parser.parse_args()
    iterations, rounds = (1, 1) if args.quick else (5, 7)
    jobs = {
        "CNN": (cnn, torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,)),
                nn.functional.cross_entropy),
        "transformer": (block, torch.randn(16, 64, 256), torch.randn(16, 64, 256),
                        nn.functional.mse_loss),
    }
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads")
    print(f"{'autocast training step':40} {'cpu':>12} {'openreg':>12} {'ratio':>7} {'target':>9}")
    rows = (  # (openreg dtype, CPU dtype, label, target)
        (torch.bfloat16, torch.bfloat16, "bf16 / CPU bf16", "<=1.20"),
        (torch.float16, torch.float16, "fp16+scaler / CPU fp16+scaler", "<=1.20"),
        (torch.float16, torch.bfloat16, "fp16+scaler / CPU bf16", "-"),
        (torch.float16, torch.float32, "fp16+scaler / CPU float32", "-"),
    )
    for name, (make, inputs, targets, loss_fn) in jobs.items():
        for dtype, cpu_dtype, label, target in rows:
            cpu_step = training_step(make, inputs, targets, loss_fn, "cpu", cpu_dtype)
            device_step = training_step(make, inputs, targets, loss_fn, "openreg", dtype)
            cpu, dev, ratio = compare(cpu_step, device_step, iterations, rounds)
            print(f"{name + ', ' + label:40} {cpu * 1e6:10.2f}us {dev * 1e6:10.2f}us "
                  f"{ratio:7.2f} {target:>9}")


if __name__ == "__main__":
    main()

"""Benchmark: an autocast training step on openreg against the CPU's autocast step.

    python benchmarks/amp.py                      # full run (a few minutes)
    python benchmarks/amp.py --kernel-threads 1   # the device's kernels on one thread
    python benchmarks/amp.py --quick              # one short round, to check the harness works

openreg runs the step under torch.autocast("openreg") in bfloat16, and in float16 with
torch.amp.GradScaler (CUDA's usual recipe). Each is compared with the CPU doing the same
work: the same dtype under torch.autocast("cpu"), the same GradScaler for float16. Two more
rows put the float16 step next to what this machine's CPU runs fast: its bfloat16 step (the
CPU has bfloat16 instructions but no float16 arithmetic, so openreg's float16 kernels
compute in float32, as CUDA's accumulate) and its float32 step (the arithmetic those kernels
actually do). A last row is the plain float32 step on both sides, without autocast (the
training step of run.py, measured here with persistent processes). Rounds alternate CPU and
openreg; each ratio is the median of the per-round ratios (openreg / CPU; lower is better).
The targets: <= 1.20 for the same-work autocast rows, <= 1.10 for the float32 row.
Each side runs in a process of its own, as in ops.py: the device's kernel threads and the
CPU side's OpenMP threads in one process would slow each other. openreg's kernels get the
backend's default of one thread, or `--kernel-threads N` (the host side then takes one).
A full run (not --quick) writes benchmarks/results/amp.json (benchmarks/record.py).
"""

import argparse
import os
import subprocess
import statistics
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record import add_results_option, ratio_case, write  # noqa: E402
from run import add_side_options, start_openreg, use_kernel_threads  # noqa: E402  (the shared harness)


def cnn() -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64 * 8 * 8, 10))


def block() -> nn.Module:
    return nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, dropout=0.0,
                                      batch_first=True)


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


JOBS = {
    "CNN": lambda: (cnn, torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,)),
                    nn.functional.cross_entropy),
    "transformer": lambda: (block, torch.randn(16, 64, 256), torch.randn(16, 64, 256),
                            nn.functional.mse_loss),
}
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
ROWS = (  # (openreg dtype, CPU dtype, label, target)
    ("bf16", "bf16", "bf16 / CPU bf16", 1.2),
    ("fp16", "fp16", "fp16+scaler / CPU fp16+scaler", 1.2),
    ("fp16", "bf16", "fp16+scaler / CPU bf16", None),
    ("fp16", "fp32", "fp16+scaler / CPU float32", None),
    ("fp32", "fp32", "float32 / CPU float32", 1.1),  # the plain step, for reference
)


def serve(device: str, kernel_threads: int | None) -> None:
    """A side's process: for each line `job dtype iterations`, the seconds a step takes."""
    start_openreg()  # on both sides: the CPU side's host allocator must match openreg's
    if device == "openreg":
        use_kernel_threads(kernel_threads)
    finish = torch.openreg.synchronize if device == "openreg" else (lambda: None)
    steps = {}
    for line in sys.stdin:
        job, dtype, count = line.split()
        step = steps.get((job, dtype))
        if step is None:
            torch.manual_seed(0)
            make, inputs, targets, loss_fn = JOBS[job]()
            step = steps[(job, dtype)] = training_step(make, inputs, targets, loss_fn, device,
                                                       DTYPES[dtype])
            step()  # warm up caches and allocators
            finish()
        start = time.perf_counter()
        for _ in range(int(count)):
            step()
        finish()
        print((time.perf_counter() - start) / int(count), flush=True)


class Side:
    """One side of the comparison, in a process of its own (`amp.py --serve DEVICE`)."""

    def __init__(self, device: str, kernel_threads: int | None) -> None:
        threads = ["--kernel-threads", str(kernel_threads)] if kernel_threads else []
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--serve", device, *threads],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def seconds(self, job: str, dtype: str, iterations: int) -> float:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(f"{job} {dtype} {iterations}\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError(f"a side of the benchmark exited (code {self.process.wait()})")
        return float(answer)

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few iterations: checks, not numbers")
    add_side_options(parser)
    add_results_option(parser)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.kernel_threads)
        return
    threads = args.kernel_threads or torch.openreg.get_kernel_threads()
    iterations, rounds = (1, 1) if args.quick else (5, 7)
    print(f"torch {torch.__version__}; {torch.get_num_threads()} threads on each side's host; "
          f"openreg kernels on {threads}")
    print(f"{'autocast training step':40} {'cpu':>12} {'openreg':>12} {'ratio':>7} {'target':>9}")
    cpu_side, device_side = Side("cpu", None), Side("openreg", args.kernel_threads)
    cases = []
    try:
        for job in JOBS:
            for dtype, cpu_dtype, label, target in ROWS:
                cpu, dev = [], []
                for _ in range(rounds):  # alternating, so both sides see the same machine
                    cpu.append(cpu_side.seconds(job, cpu_dtype, iterations))
                    dev.append(device_side.seconds(job, dtype, iterations))
                cases.append(ratio_case(f"{job}, {label}", [d / c for c, d in zip(cpu, dev)],
                                        target))
                shown = f"<={target:.2f}" if target else "-"
                print(f"{job + ', ' + label:40} {statistics.median(cpu) * 1e6:10.2f}us "
                      f"{statistics.median(dev) * 1e6:10.2f}us {cases[-1]['ratio']:7.2f} "
                      f"{shown:>9}", flush=True)
    finally:
        cpu_side.close()
        device_side.close()
    if not args.quick:
        write("amp", "Autocast training steps",
              "A CNN's and a transformer block's training step under autocast (bf16, and fp16 "
              "with a GradScaler) and in plain float32, openreg against the CPU.",
              {"steps_per_round": iterations, "rounds": rounds,
               "kernel_threads": threads, "host_threads": torch.get_num_threads()},
              cases, args.results, argv)


if __name__ == "__main__":
    main()

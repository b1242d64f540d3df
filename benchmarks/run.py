"""Benchmarks: openreg against native CPU on the same work, in one run, reported as ratios.

    python benchmarks/run.py            # full run (about a minute)
    python benchmarks/run.py --quick    # a few iterations, to check the harness works

Each case times a loop of the same operation on CPU tensors and on openreg
tensors; openreg's loop ends with a synchronize, so queued kernels are paid
for. CPU and openreg rounds alternate, so both see the same machine (a 2-core
VM drifts), and the ratio reported is the median of the per-round ratios
(openreg / CPU; lower is better, 1.00 is as fast as native CPU).
A full run (not --quick) writes benchmarks/results/run.json (benchmarks/record.py).
"""

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from collections.abc import Callable

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record import add_results_option, ratio_case, write  # noqa: E402


@dataclass
class Case:
    name: str
    cpu: Callable[[], object]
    device: Callable[[], object]
    iterations: int
    target: float | None  # the upper bound for the ratio, if any


def seconds_per_call(fn: Callable[[], object], finish: Callable[[], None],
                     iterations: int) -> float:
    start = time.perf_counter()
    for _ in range(iterations):
        fn()
    finish()
    return (time.perf_counter() - start) / iterations


def alternate(cpu_fn: Callable[[], object], device_fn: Callable[[], object], iterations: int,
              rounds: int) -> tuple[list[float], list[float], list[float]]:
    """(CPU seconds, openreg seconds, ratio) of each of `rounds` alternating rounds."""
    for fn in (cpu_fn, device_fn):  # warm up caches and allocators
        for _ in range(max(2, iterations // 10)):
            fn()
    torch.openreg.synchronize()
    cpu, dev, ratios = [], [], []
    for _ in range(rounds):
        # The device idles first, as a program's CPU work finds it between the device's work: its
        # worker gives back its OpenMP threads after a millisecond (docs/launching.md).
        time.sleep(0.005)
        cpu.append(seconds_per_call(cpu_fn, lambda: None, iterations))
        dev.append(seconds_per_call(device_fn, torch.openreg.synchronize, iterations))
        ratios.append(dev[-1] / cpu[-1])
    return cpu, dev, ratios


def use_kernel_threads(threads: int | None) -> None:
    """Gives openreg's kernels `threads` threads (None: the backend's default, PyTorch's own
    thread count). The host thread keeps PyTorch's count either way."""
    if threads:
        torch.openreg.set_kernel_threads(threads)


def start_openreg() -> None:
    """Starts openreg's runtime in this process. When it starts, the driver raises glibc's mmap
    and trim thresholds for the whole process (docs/launching.md,
    "Kernel bodies: memory that crosses threads"), so a CPU side measured in a process of its
    own calls this too: without it, it pays page faults on fresh megabyte temporaries that the
    openreg side does not (a CPU conv2d of 1 M floats faults hundreds of times a call without
    it, never with it)."""
    torch.zeros(1, device="openreg")


def kernel_threads_count(text: str) -> int:
    """--kernel-threads' value: 1 to the machine's cores, as torch.openreg accepts."""
    threads = int(text)
    if not 1 <= threads <= (os.cpu_count() or 1):
        raise argparse.ArgumentTypeError(
            f"--kernel-threads must be between 1 and the machine's cores ({os.cpu_count()})")
    return threads


def add_kernel_threads_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kernel-threads", type=kernel_threads_count, default=None,
                        help="threads of openreg's kernels (default: the backend's, "
                             "PyTorch's thread count)")


def add_side_options(parser: argparse.ArgumentParser) -> None:
    """The options of a benchmark whose two sides run in processes of their own: the kernel
    threads, and the hidden --serve DEVICE that starts a side's process."""
    add_kernel_threads_option(parser)
    parser.add_argument("--serve", choices=("cpu", "openreg"), help=argparse.SUPPRESS)


def running_threads(pid: int) -> int | None:
    """How many of process `pid`'s threads are running or waiting for a core, from Linux's
    /proc; None where /proc cannot tell."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    running = 0
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                # The state is the first field after the command name, which is in parentheses.
                running += stat.read().rpartition(")")[2].split()[0] == "R"
        except (OSError, IndexError):
            pass  # the thread has ended
    return running


def report(name: str, cpu: float, device: float, ratio: float, target: str) -> None:
    print(f"{name:28} {cpu * 1e6:10.2f}us {device * 1e6:10.2f}us {ratio:7.2f} {target:>9}")


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

    # (c) what the borrowed path's check on the host costs: hardtanh (a PyTorch CPU kernel
    # run on the device) of 1,024 floats, with a plan cached after its first call, and with
    # new bounds every call, so that every call is the first of its plan and runs the CPU
    # kernel on the host before it returns (docs/borrowed-kernels.md).
    h, dh = torch.randn(1024), torch.randn(1024, device="openreg")
    out.append(Case("borrowed hardtanh 1K, cached plan", lambda: F.hardtanh(h, -0.5, 0.5),
                    lambda: F.hardtanh(dh, -0.5, 0.5), 2000, None))
    bounds = itertools.count()

    def new_bounds(x):
        bound = 0.5 + next(bounds) * 1e-9  # a scalar value the plan cache has not seen
        return F.hardtanh(x, -bound, bound)

    out.append(Case("borrowed hardtanh 1K, new plan", lambda: new_bounds(h),
                    lambda: new_bounds(dh), 200, None))

    # (d) host<->device copies against a CPU copy of the same bytes (64 MiB).
    src, dst = torch.randn(n), torch.empty(n)
    dev = torch.empty(n, device="openreg")
    out.append(Case("copy 64 MiB host->device", lambda: dst.copy_(src), lambda: dev.copy_(src),
                    10, 1.25))
    out.append(Case("copy 64 MiB device->host", lambda: dst.copy_(src), lambda: dst.copy_(dev),
                    10, 1.25))
    return out


ALLOC_SNIPPET = """
import time, torch
device = torch.device("openreg")
def run(n):
    start = time.perf_counter()
    for _ in range(n):
        torch.empty(262144, device=device)  # 1 MiB, freed at once
    torch.openreg.synchronize()
    return (time.perf_counter() - start) / n
run(50)
print(*(run({n}) for _ in range({repeats})))
"""


def uncached_allocation(iterations: int, repeats: int) -> list[float]:
    """1 MiB allocate+free with the cache off, seconds of each of `repeats` rounds: needs a
    fresh process (the switch is read once)."""
    env = {**os.environ, "OPENREG_NO_MEMORY_CACHING": "1"}
    code = ALLOC_SNIPPET.format(n=iterations, repeats=repeats)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return [float(seconds) for seconds in out.stdout.split()]


def host_work_after_device(quick: bool,
                           rounds: int) -> tuple[list[float], list[float], list[float]]:
    """The host's own small CPU work (parallel loops of a few microseconds), timed a few
    milliseconds after a burst of large kernels on the device, against the same work timed after
    the same burst on the CPU: seconds after each, and the per-round ratios. Near 1 when the
    device's idle worker has given its OpenMP threads back (docs/launching.md, "Threads of a
    kernel")."""
    x, w = torch.randn(1 << 16), torch.randn(128, 128)

    def host_work() -> float:
        return seconds_per_call(lambda: (x.exp(), w @ w, x.sum()), lambda: None,
                                20 if quick else 300)

    big = torch.randn(1 << 22)
    dbig = big.to("openreg")
    after_cpu, after_device, ratios = [], [], []
    for _ in range(rounds):
        times = []
        for burst, finish in ((lambda: big.sin(), lambda: None),
                              (lambda: dbig.sin(), torch.openreg.synchronize)):
            for _ in range(10):
                burst()
            finish()
            time.sleep(0.005)
            times.append(host_work())
        after_cpu.append(times[0])
        after_device.append(times[1])
        ratios.append(times[1] / times[0])
    return after_cpu, after_device, ratios


def event_timing_error(quick: bool) -> tuple[float, float]:
    """Event-timed milliseconds against wall-clock milliseconds for the same device work."""
    x = torch.randn(1024, 1024, device="openreg")
    torch.openreg.synchronize()
    start, end = torch.openreg.Event(enable_timing=True), torch.openreg.Event(enable_timing=True)
    began = time.perf_counter()
    start.record()
    for _ in range(2 if quick else 20):
        x = x @ x / 1024
    end.record()
    end.synchronize()
    wall = (time.perf_counter() - began) * 1000
    return start.elapsed_time(end), wall


OPS_SNIPPET = """
import time, statistics, torch, torch.nn.functional as F
import warnings; warnings.simplefilter("ignore")
{setup}device = "{device}"
torch.manual_seed(0)
x = torch.randn(1 << 20, device=device)
m = torch.randn(512, 512, device=device)
img = torch.randn(16, 16, 32, 32, device=device)
w = torch.randn(32, 16, 3, 3, device=device)
cases = {{"sin, 1M floats": lambda: torch.sin(x), "softmax 512x512": lambda: m.softmax(1),
          "conv2d 16x16x32x32": lambda: F.conv2d(img, w, padding=1)}}
def sync():
    if device != "cpu":
        torch.openreg.synchronize()
for name, f in cases.items():
    for _ in range(3): f()
    sync()
    times = []
    for _ in range({rounds}):
        t = time.perf_counter()
        for _ in range({n}): f()
        sync()
        times.append((time.perf_counter() - t) / {n})
    print(name, *times, sep="\t")
"""


def op_paths(quick: bool) -> dict[str, dict[str, list[float]]]:
    """Per-op seconds of each round on the CPU, the native openreg path and the openreg
    fallback path, each side in a process of its own, one after the other."""
    results: dict[str, dict[str, list[float]]] = {}
    runs = {"cpu": ("cpu", {}), "openreg": ("openreg", {}),
            "fallback": ("openreg", {"OPENREG_NO_BORROWED": "1"})}
    for label, (device, extra) in runs.items():
        code = OPS_SNIPPET.format(setup=side_setup(device, None), device=device,
                                  rounds=1 if quick else 5, n=1 if quick else 20)
        out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **extra},
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            name, *seconds = line.split("\t")
            results.setdefault(name, {})[label] = [float(s) for s in seconds]
    return results


MODELS_SNIPPET = """
import time, statistics, torch, torch.nn as nn
{setup}import warnings; warnings.simplefilter("ignore")
def cnn():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64 * 8 * 8, 10))
def block():
    torch.manual_seed(0)
    return nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, dropout=0.0,
                                      batch_first=True)
def step_time(make, x, y, loss_fn, device):
    model = make().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = x.to(device), y.to(device)
    def step():
        opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()
    for _ in range(3): step()
    torch.openreg.synchronize()
    times = []
    for _ in range({steps}):
        t = time.perf_counter(); step(); torch.openreg.synchronize()
        times.append(time.perf_counter() - t)
    return statistics.median(times)
jobs = {{"CNN training step": (cnn, torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,)),
                               nn.functional.cross_entropy),
        "transformer training step": (block, torch.randn(16, 64, 256), torch.randn(16, 64, 256),
                                      nn.functional.mse_loss)}}
for name, (make, x, y, loss_fn) in jobs.items():
    print(name, step_time(make, x, y, loss_fn, "{device}"))
"""
def side_setup(device: str, kernel_threads: int | None) -> str:
    """The lines a side's process runs first: openreg's runtime on both sides (`start_openreg`),
    then on the openreg side its kernel threads (None: the backend's default,
    docs/launching.md, "Threads of a kernel")."""
    here = os.path.dirname(os.path.abspath(__file__))
    setup = (f"import sys; sys.path.insert(0, {here!r})\n"
             "from run import start_openreg, use_kernel_threads; start_openreg()\n")
    if device == "cpu":
        return setup
    return setup + f"use_kernel_threads({kernel_threads})\n"


def model_steps(quick: bool,
                kernel_threads: int | None) -> list[tuple[str, float, float, list[float]]]:
    """(name, CPU seconds, openreg seconds, per-round ratios) of a training step of each model:
    medians of alternating rounds, each side of a round in a new process of its own (the
    kernels' OpenMP threads and the CPU side's would slow each other in one process)."""
    steps, rounds = (1, 1) if quick else (10, 3)
    times: dict[str, dict[str, list[float]]] = {}
    for _ in range(rounds):
        for device in ("cpu", "openreg"):
            code = MODELS_SNIPPET.format(setup=side_setup(device, kernel_threads),
                                         steps=steps, device=device)
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout
            for line in out.splitlines():
                name, _, seconds = line.rpartition(" ")
                times.setdefault(name, {"cpu": [], "openreg": []})[device].append(float(seconds))
    return [(name, statistics.median(t["cpu"]), statistics.median(t["openreg"]),
             [d / c for c, d in zip(t["cpu"], t["openreg"])]) for name, t in times.items()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few iterations: checks, not numbers")
    add_kernel_threads_option(parser)
    add_results_option(parser)
    args = parser.parse_args(argv)
    use_kernel_threads(args.kernel_threads)
    rounds = 1 if args.quick else 9
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads, openreg kernels on "
          f"{torch.openreg.get_kernel_threads()}")
    print(f"{'case':28} {'cpu':>12} {'openreg':>12} {'ratio':>7} {'target':>9}")
    recorded = []

    def record(name, cpu, device, ratios, target, shown, **how) -> None:
        report(name, cpu, device, statistics.median(ratios), shown)
        recorded.append(ratio_case(name, ratios, target, **how))

    for case in cases():
        iterations = 2 if args.quick else case.iterations
        cpu, dev, ratios = alternate(case.cpu, case.device, iterations, rounds)
        record(case.name, statistics.median(cpu), statistics.median(dev), ratios, case.target,
               f"<={case.target:.2f}" if case.target else "")

    # Allocator: allocate+free 1 MiB, cached and uncached, against torch.empty on the CPU.
    iterations = 20 if args.quick else 20000
    host, device = torch.device("cpu"), torch.device("openreg")  # same argument shape for both
    cpu, cached, ratios = alternate(lambda: torch.empty(262144, device=host),
                                    lambda: torch.empty(262144, device=device), iterations, rounds)
    cpu = statistics.median(cpu)
    record("alloc+free 1 MiB, cached", cpu, statistics.median(cached), ratios, 1.0, "<=1.00")
    uncached = uncached_allocation(20 if args.quick else 2000, rounds)
    record("alloc+free 1 MiB, uncached", cpu, statistics.median(uncached),
           [u / cpu for u in uncached], None, "",
           note="openreg in a process of its own (the switch is read once), against the "
                "cached case's CPU median")

    # Operators: the native openreg path against the CPU and against the CPU fallback.
    for name, t in op_paths(args.quick).items():
        for path, label in (("openreg", "native"), ("fallback", "fallback")):
            record(f"{name} ({label})", statistics.median(t["cpu"]), statistics.median(t[path]),
                   [d / c for c, d in zip(t["cpu"], t[path])], None, "", spread=False,
                   note="each side in a process of its own, one after the other")
        faster = statistics.median(t["fallback"]) / statistics.median(t["openreg"])
        print(f"{'':28} native is {faster:.1f}x faster than the fallback")

    # Training steps of ordinary models, all on the device (no fallback).
    for name, cpu, dev, ratios in model_steps(args.quick, args.kernel_threads):
        record(name, cpu, dev, ratios, 1.1, "<=1.10")

    after_cpu, after_device, ratios = host_work_after_device(args.quick, rounds)
    record("host CPU work after device", statistics.median(after_cpu),
           statistics.median(after_device), ratios, 1.05, "<=1.05",
           note="the host's own small parallel CPU loops 5 ms after a burst of large kernels on "
                "openreg ÷ the same 5 ms after the burst on the CPU")

    events, wall = event_timing_error(args.quick)
    print(f"{'event timing vs wall clock':28} {wall:10.2f}ms {events:10.2f}ms "
          f"{events / wall:7.2f} 0.90-1.10")
    recorded.append(ratio_case("event timing vs wall clock", [events / wall], [0.9, 1.1],
                               note="event-timed milliseconds ÷ wall-clock milliseconds"))
    if not args.quick:
        write("run", "openreg against native CPU",
              "Small and large operations, copies, allocation, operator paths, training steps "
              "and event timing, each timed on openreg and on native CPU on the same work.",
              {"rounds": rounds, "kernel_threads": torch.openreg.get_kernel_threads()}, recorded,
              args.results, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

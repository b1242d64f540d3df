"""What profiling costs: the driver's activity hooks when off, and the profilers when on.

    python benchmarks/profiling.py            # full run (a few minutes: builds a driver copy)
    python benchmarks/profiling.py --quick    # a few iterations, to check the harness works

1. Profiling off. The driver is built a second time with its activity hooks stripped out of
   the files that queue work (stream.cpp, launch.cpp, copy.cpp: the lines that name
   `activity`), and the small-op case of benchmarks/run.py
   (`add` of 64 floats, launch to completion) runs against both drivers, alternating rounds,
   each in a fresh process (LD_PRELOAD picks the stripped driver). The issue's bound: the
   median ratio (hooked / stripped) is within 2 % of 1.
2. Profiling on. The same op under torch.profiler.profile(activities=[CPU, PrivateUse1]) on
   openreg against the op without the profiler, and against the CPU profiler on CPU tensors,
   in alternating rounds as benchmarks/run.py does.

Each ratio is the median of the per-round ratios. A full run (not --quick) writes
benchmarks/results/profiling.json (benchmarks/record.py).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "third_party" / "openreg"
sys.path.insert(0, str(ROOT / "benchmarks"))
from record import add_results_option, ratio_case, write  # noqa: E402

SMALL_OP = """
import time, torch
a = torch.randn(64, device="openreg"); b = torch.randn(64, device="openreg")
def run(n):
    start = time.perf_counter()
    for _ in range(n):
        a + b
    torch.openreg.synchronize()
    return (time.perf_counter() - start) / n
run(2000)
maps = open("/proc/self/maps").read().split()
print(next(p for p in maps if p.endswith("/libopenreg.so")))  # which driver ran
print(min(run({n}) for _ in range(5)))
"""


HOOKED = {"stream.cpp", "launch.cpp", "copy.cpp"}  # the driver files that queue tasks


def strip_hooks(source: str) -> str:
    """A driver source without the activity hooks: the driver as it was before profiling."""
    source = re.sub(r"\n[^\n]*activity_discard[^\n]*", "", source)
    source = re.sub(r"\n[^\n]*activity_wrap\(t\);[^\n]*", "", source)
    source = re.sub(r",\s*activity_open\([^()]*\)", "", source)
    source = re.sub(r"\n[^\n]*= activity_open\([^()]*\);[^\n]*", "", source)
    if "activity" in source:
        raise SystemExit("the driver has activity hooks this script does not know how to strip")
    return source


def build_stripped_driver(out: Path) -> Path:
    src = out / "src"
    src.mkdir()
    for f in (DRIVER / "src").iterdir():
        text = f.read_text()
        (src / f.name).write_text(strip_hooks(text) if f.name in HOOKED else text)
    lib = out / "libopenreg.so"
    subprocess.run(["c++", "-O3", "-DNDEBUG", "-std=c++20", "-shared", "-fPIC",
                    "-fvisibility=hidden", "-Wl,-soname,libopenreg.so", f"-I{DRIVER / 'include'}",
                    f"-I{src}", *sorted(str(p) for p in src.glob("*.cpp")), "-o", str(lib),
                    "-lpthread"], check=True)
    return lib


def small_op_seconds(preload: Path | None, n: int) -> float:
    env = dict(os.environ)
    if preload is not None:
        env["LD_PRELOAD"] = str(preload)
    out = subprocess.run([sys.executable, "-c", SMALL_OP.format(n=n)], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    driver, seconds = out[-2], float(out[-1])
    if (preload is not None) != (driver == str(preload)):
        raise SystemExit(f"expected {preload or 'the built driver'}, the op ran on {driver}")
    return seconds


def hooks_off(quick: bool) -> tuple[float, float, float, list[float]]:
    """Small-op seconds, hooked and stripped (best of all rounds), the best times' ratio (robust
    to a busy machine) and each round's ratio."""
    with tempfile.TemporaryDirectory() as tmp:
        stripped = build_stripped_driver(Path(tmp))
        n, rounds = (2000, 2) if quick else (20000, 15)
        hooked, plain, ratios = [], [], []
        for _ in range(rounds):
            hooked.append(small_op_seconds(None, n))
            plain.append(small_op_seconds(stripped, n))
            ratios.append(hooked[-1] / plain[-1])
    return min(hooked), min(plain), min(hooked) / min(plain), ratios


def per_op(fn, sync, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    sync()
    return (time.perf_counter() - start) / n


def profiling_on(quick: bool) -> dict[str, list[float]]:
    """Per-op seconds of each of the alternating rounds: openreg off/on, CPU under the CPU
    profiler."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    a, b = torch.randn(64), torch.randn(64)
    da, db = a.to("openreg"), b.to("openreg")
    sync = torch.openreg.synchronize
    n, rounds = (500, 2) if quick else (5000, 7)
    runs: dict[str, list[float]] = {"openreg off": [], "openreg on": [], "cpu on": []}
    for _ in range(rounds):
        runs["openreg off"].append(per_op(lambda: da + db, sync, n))
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]):
            runs["openreg on"].append(per_op(lambda: da + db, sync, n))
        with profile(activities=[ProfilerActivity.CPU]):
            runs["cpu on"].append(per_op(lambda: a + b, lambda: None, n))
    return runs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    add_results_option(parser)
    args = parser.parse_args(argv)
    hooked, plain, best, ratios = hooks_off(args.quick)
    cases = [ratio_case("add 64 floats, driver with hooks (off) / without", ratios, [0.98, 1.02],
                        note=f"best rounds' ratio {best:.3f}")]
    print(f"{'case':40} {'per op':>10} {'ratio':>7} {'target':>8}")
    print(f"{'add 64 floats, driver without hooks':40} {plain * 1e6:8.2f}us")
    print(f"{'add 64 floats, driver with hooks (off)':40} {hooked * 1e6:8.2f}us "
          f"{cases[0]['ratio']:7.3f} {'0.98-1.02':>8}   (best rounds' ratio {best:.3f})")
    on = profiling_on(args.quick)
    cases.append(ratio_case("add 64 floats, openreg: profiled / not profiled",
                            [a / b for a, b in zip(on["openreg on"], on["openreg off"])], 2.0))
    cases.append(ratio_case("add 64 floats, profiled: openreg / CPU",
                            [a / b for a, b in zip(on["openreg on"], on["cpu on"])]))
    median = {k: statistics.median(v) for k, v in on.items()}
    print(f"{'add 64 floats, openreg, not profiled':40} {median['openreg off'] * 1e6:8.2f}us")
    print(f"{'add 64 floats, openreg, profiled':40} {median['openreg on'] * 1e6:8.2f}us "
          f"{cases[1]['ratio']:7.2f} {'<= 2':>8}")
    print(f"{'add 64 floats, CPU, CPU profiler':40} {median['cpu on'] * 1e6:8.2f}us "
          f"{cases[2]['ratio']:7.2f}")
    if not args.quick:
        write("profiling", "What profiling costs",
              "A small operator on openreg: the driver with its activity hooks against the driver "
              "without them, and under torch.profiler against unprofiled and against the CPU "
              "profiler on CPU tensors.", {"hooks_rounds": len(ratios),
                                          "profiler_rounds": len(on["openreg on"])},
              cases, args.results, argv)


if __name__ == "__main__":
    main()

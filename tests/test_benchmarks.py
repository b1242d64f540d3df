"""The benchmark harness runs (numbers are measured by hand, never asserted in tests)."""

import os
import subprocess
import sys
import time

from conftest import ROOT


def test_harness_runs_every_case():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    for case in ("add, 64 floats", "matmul 512x512", "copy 64 MiB host->device",
                 "alloc+free 1 MiB, cached", "alloc+free 1 MiB, uncached",
                 "event timing vs wall clock", "sin, 1M floats (native)",
                 "conv2d 16x16x32x32 (fallback)", "CNN training step", "transformer training step"):
        assert case in result.stdout, case


def test_per_operator_benchmark_runs_every_operator():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "ops.py"), "--quick",
                             "--size", "1K"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-2].startswith("geomean")
    assert lines[-1].startswith("over 1.3 at 1K: ")  # the operators over target, or "none"
    header = next(i for i, line in enumerate(lines) if line.startswith("operator"))
    over = []
    for row in lines[header + 1:-2]:
        ratio = row[24:].split()[2]  # the name takes 24 columns, then CPU, openreg, ratio, worst
        if float(ratio) > 1.3:
            over.append(f"{row[:24].strip()} {ratio}")
    assert lines[-1] == "over 1.3 at 1K: " + (", ".join(over) or "none")
    for name in ("relu", "layer_norm", "masked_select", "index (bool mask)", "amp unscale"):
        row = next(line for line in lines if line.startswith(name + " "))
        assert "aten::" not in row, row  # nothing fell back to the CPU


def test_per_operator_rounds_are_spread_over_passes():
    """Each operator is measured in every pass, the same tensors each time; the ratio is a
    median over all rounds of all passes."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import ops

    results, fell_back = ops.run_passes(["relu", "add"], ["1K"], passes=3, rounds=2, quick=True)
    for name in ("relu", "add"):
        cpu, dev, ratios, per_pass = results[(name, "1K")]
        assert len(cpu) == len(dev) == len(ratios) == 6 and len(per_pass) == 3
        assert all(d / c == r for c, d, r in zip(cpu, dev, ratios))
    assert fell_back == {"relu": set(), "add": set()}


def test_per_operator_passes_go_to_pairs_of_processes_in_turn():
    """With two pairs of side processes, each pass is measured by one pair, in turn; every
    pass still measures every operator."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import ops

    results, _ = ops.run_passes(["neg"], ["1K"], passes=4, rounds=1, quick=True, processes=2)
    cpu, dev, ratios, per_pass = results[("neg", "1K")]
    assert len(cpu) == len(dev) == len(ratios) == len(per_pass) == 4
    assert all(seconds > 0 for seconds in cpu + dev)


def test_settle_waits_until_no_thread_of_the_side_runs():
    """The harness's wait between rounds follows the side's threads: a process whose thread
    spins counts as running and is waited for, up to the limit; once it sleeps, settle returns
    at once."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import ops

    assert ops.running_threads(os.getpid()) >= 1  # this thread, reading its own /proc
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(1.0)  # both interpreters started
        assert ops.running_threads(spinner.pid) >= 1
        assert ops.running_threads(sleeper.pid) == 0
        side = ops.Side.__new__(ops.Side)  # settle needs only the process
        side.process = spinner
        start = time.perf_counter()
        side.settle()
        assert time.perf_counter() - start >= ops.SETTLE_LIMIT
        side.process = sleeper
        start = time.perf_counter()
        side.settle()
        assert time.perf_counter() - start < ops.SETTLE_LIMIT / 2
    finally:
        for p in (spinner, sleeper):
            p.kill()
            p.wait()
    assert ops.running_threads(spinner.pid) is None  # gone: /proc cannot tell


def test_pace_names_the_side_that_sets_the_pace():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "pace.py"), "-k", "eq",
                             "--calls", "20", "--rounds", "2"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("eq ")]
    assert len(rows) == 1 and rows[0].split()[-1] in ("host", "device"), result.stdout


def test_autograd_thread_times_the_three_ways():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "autograd_thread.py"),
                             "--calls", "5", "--rounds", "2", "--gap-ms", "0"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = {line[:16].strip(): line[16:].split() for line in result.stdout.splitlines()[2:5]}
    assert sorted(rows) == ["caller thread", "engine thread", "kernel only"], result.stdout
    assert all(len(v) == 3 and all(t.endswith("us") and float(t[:-2]) > 0 for t in v)
               for v in rows.values()), result.stdout
    assert "the hand-over to autograd's thread and back: " in result.stdout


def test_phases_splits_windows_by_the_launchs_cost():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "phases.py"),
                             "--seconds", "1", "--calls", "500"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    windows = int(lines[0].split("; ")[2].split()[0])
    rows = {line.split()[0] if not line.startswith("with launch") else "with launch": line
            for line in lines[2:6]}
    assert set(rows) == {"cpu", "dispatch", "with launch", "launch"}, result.stdout
    for name, line in rows.items():
        fastest, median, slowest = (float(v) for v in line.split()[-3:])
        assert fastest <= median <= slowest, line
    slow, total = lines[6].split(": ")[1].split(" of ")
    assert int(total) == windows and 0 <= int(slow) < windows, lines[6]
    assert lines[7].startswith("fast: ") and "openreg/cpu" in lines[7], result.stdout
    assert len(lines) == (9 if int(slow) else 8), result.stdout


def test_handoff_reports_four_quarters_by_round_trip():
    binary = ROOT / "build" / "cmake" / "bin" / "openreg_handoff"
    assert binary.exists(), f"build the project first: {binary} is missing"
    result = subprocess.run([str(binary), "--seconds", "1"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 5 and "windows in" in lines[0], result.stdout
    trips = []
    for q, line in enumerate(lines[1:], start=1):
        assert line.startswith(f"quarter {q}: round trip "), line
        trip = float(line.split("round trip ")[1].split()[0])
        alone = float(line.split("work alone ")[1].split()[0])
        handed = float(line.split("handed over ")[1].split()[0])
        assert trip > 0 and alone > 0 and handed > 0, line
        trips.append(trip)
    assert trips == sorted(trips), result.stdout  # quarters in order of their round trips
    for bad in (["--seconds", "0"], ["--bogus"]):
        refused = subprocess.run([str(binary), *bad], capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and refused.stderr, bad

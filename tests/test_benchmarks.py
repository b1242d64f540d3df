"""The benchmark harness runs and records its results as data (numbers are measured by hand,
never asserted in tests); tools/results.py renders them as the guide's performance page and the
README's table."""

import datetime
import json
import os
import subprocess
import sys
import time

import pytest
import torch
from conftest import ROOT, cpp_program

sys.path.insert(0, str(ROOT / "tools"))
import results  # noqa: E402  (tools/results.py)


def test_harness_runs_every_case(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick",
                             "--results", str(tmp_path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.iterdir()) == []  # a quick run records nothing
    for case in ("add, 64 floats", "matmul 512x512", "copy 64 MiB host->device",
                 "alloc+free 1 MiB, cached", "alloc+free 1 MiB, uncached",
                 "event timing vs wall clock", "sin, 1M floats (native)",
                 "conv2d 16x16x32x32 (fallback)", "CNN training step", "transformer training step"):
        assert case in result.stdout, case


def test_per_operator_benchmark_runs_every_operator(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "ops.py"), "--quick",
                             "--size", "1K", "--results", str(tmp_path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.iterdir()) == []  # a quick run records nothing
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


def test_models_benchmark_runs_every_model(tmp_path):
    """Each model's step runs on both sides, which compute the same losses, gradients and
    generated tokens (a difference makes the run exit 1)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import models

    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "models.py"), "--quick",
                             "--results", str(tmp_path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.iterdir()) == []  # a quick run records nothing
    lines = result.stdout.splitlines()
    rows = {line[:34].strip(): line[34:].split() for line in lines[2:-2]}
    names = [name if training else f"{name}, {models.NEW_TOKENS} tokens (time)"
             for name, (_, training) in models.JOBS.items()]
    assert list(rows) == [*names, "GPT-2 generate, tokens/s"], result.stdout
    for name, row in rows.items():  # CPU and openreg (ms a step, or tokens/s), ratio, spread
        times = row[:2] if "tokens/s" in name else [t.removesuffix("ms") for t in row[:2]]
        assert all(float(t) > 0 for t in times) and float(row[2]) > 0, (name, row)
    assert lines[-2].startswith("geomean, training steps")
    assert lines[-1].startswith("off target: ")


def test_distributed_benchmark_runs_both_paths_at_two_and_four_ranks(tmp_path):
    """In place and staged, at 2 and 4 ranks, each with the cost model's prediction and the
    openreg result checked equal to Gloo's on CPU tensors (a difference fails the run)."""
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "distributed.py"),
                             "--quick", "--results", str(tmp_path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.iterdir()) == []  # a quick run records nothing
    for world in (2, 4):
        for path in ("", "staged "):
            name = f"{path}all_reduce 64 MiB, {world} ranks"
            row = next(line for line in result.stdout.splitlines() if line.startswith(name + " "))
            assert row.endswith("ms"), row  # the model's prediction ends the row
    assert "DDP CNN step" in result.stdout


def test_models_benchmark_finds_a_wrong_result():
    """The check that stops a run: losses and gradient norms within a relative tolerance,
    gradients that are zero but for rounding within a floor, tokens exactly."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import models

    cpu = {"results": [2.0, 1.5], "grads": [4.0, 0.5, 1e-9]}
    assert models.same_results("m", cpu, {"results": [2.0001, 1.5], "grads": [4.001, 0.5, 3e-9]}) \
        is None
    assert "step 2's loss" in models.same_results("m", cpu, {"results": [2.0, 1.51],
                                                             "grads": cpu["grads"]})
    assert "parameter 1's gradient" in models.same_results(
        "m", cpu, {"results": cpu["results"], "grads": [4.0, 0.505, 1e-9]})
    assert "2 parameters have a gradient" in models.same_results(
        "m", cpu, {"results": cpu["results"], "grads": [4.0, 0.5]})
    tokens = {"results": [[5, 6, 7], [5, 6, 7]], "grads": []}
    assert models.same_results("g", tokens, tokens) is None
    assert "step 1 generated [5, 6, 8]" in models.same_results(
        "g", tokens, {"results": [[5, 6, 8], [5, 6, 7]], "grads": []})


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


def test_pace_names_the_side_that_sets_the_pace(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "pace.py"), "-k", "eq",
                             "--calls", "20", "--rounds", "2", "--results", str(tmp_path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("eq ")]
    assert len(rows) == 1 and rows[0].split()[-1] in ("host", "device"), result.stdout
    assert list(tmp_path.iterdir()) == []  # a part of the operators records nothing


def test_autograd_thread_times_the_three_ways(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "autograd_thread.py"),
                             "--calls", "5", "--rounds", "2", "--gap-ms", "0",
                             "--results", str(tmp_path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = {line[:16].strip(): line[16:].split() for line in result.stdout.splitlines()[2:5]}
    assert sorted(rows) == ["caller thread", "engine thread", "kernel only"], result.stdout
    assert all(len(v) == 3 and all(t.endswith("us") and float(t[:-2]) > 0 for t in v)
               for v in rows.values()), result.stdout
    assert "the hand-over to autograd's thread and back: " in result.stdout
    recorded = results.load(tmp_path)["autograd_thread"]
    assert [case["unit"] for case in recorded["cases"][:3]] == ["µs a call"] * 3
    assert recorded["cases"][3]["name"] == "engine thread / caller thread"
    assert recorded["cases"][3]["rounds"] == 2


def test_phases_splits_windows_by_the_launchs_cost(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "phases.py"),
                             "--seconds", "1", "--calls", "500", "--results", str(tmp_path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    windows = int(lines[0].split("; ")[2].split()[0])
    rows = {line.split()[0] if not line.startswith("with launch") else "with launch": line
            for line in lines[2:6]}
    assert set(rows) == {"cpu", "dispatch", "with launch", "launch"}, result.stdout
    for _, line in rows.items():
        fastest, median, slowest = (float(v) for v in line.split()[-3:])
        assert fastest <= median <= slowest, line
    slow, total = lines[6].split(": ")[1].split(" of ")
    assert int(total) == windows and 0 <= int(slow) < windows, lines[6]
    assert lines[7].startswith("fast: ") and "openreg/cpu" in lines[7], result.stdout
    assert len(lines) == (9 if int(slow) else 8), result.stdout


def test_handoff_reports_four_quarters_by_round_trip():
    binary = cpp_program("openreg_handoff")
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


# ---- results as data: benchmarks/record.py writes them, tools/results.py renders them ----


class TestResults:
    """A full run writes benchmarks/results/<benchmark>.json; tools/results.py checks each file,
    renders the performance page and the README's table, and finds a stale table."""

    def test_a_full_run_writes_its_result(self, tmp_path):
        result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "phases.py"),
                                 "--seconds", "1", "--calls", "500", "--results", str(tmp_path)],
                                capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        text = (tmp_path / "phases.json").read_text(encoding="utf-8")
        written = json.loads(text)
        assert results.problems(written) == []
        cases = [line for line in text.splitlines() if line.startswith('  {"name": ')]
        assert len(cases) == len(written["cases"])  # one case a line: git diffs by case
        assert written["benchmark"] == "phases" and written["title"] and written["what"]
        assert written["command"] == "python benchmarks/phases.py --seconds 1 --calls 500"
        assert set(written["machine"]) == {"cpu", "cores", "os"}
        assert written["machine"]["cores"] == os.cpu_count()
        assert written["torch"] == torch.__version__
        assert written["python"] == ".".join(map(str, sys.version_info[:3]))
        assert datetime.datetime.fromisoformat(written["date"]).tzinfo is not None
        assert written["commit"] is None or isinstance(written["commit"], str)
        assert written["settings"] == {"seconds": 1.0, "calls": 500, "slow": 1.5}
        ratio = next(c for c in written["cases"] if "ratio" in c)
        assert ratio["spread"][0] <= ratio["ratio"] <= ratio["spread"][1]
        assert ratio["rounds"] >= 1 and ratio["target"] is None

    def test_cases_are_medians_with_their_spread(self):
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import record

        case = record.ratio_case("x", [1.2, 0.9, 1.0], 1.1, note="why")
        assert case == {"name": "x", "ratio": 1.0, "spread": [0.9, 1.2], "rounds": 3,
                        "target": 1.1, "note": "why"}
        assert record.ratio_case("y", [2.0, 1.0], spread=False)["spread"] is None
        assert record.value_case("z", [3.0, 1.0, 2.0], "µs")["value"] == 2.0
        # The geometric mean over operators, its spread that of each pass's geometric mean.
        geomean = record.geomean_case("g", [0.5, 2.0], [[0.5, 1.0], [2.0, 1.0]])
        assert geomean["ratio"] == 1.0 and geomean["spread"] == [1.0, 1.0]
        assert geomean["rounds"] == 2
        assert record.command("ops", ["--results", "/tmp/x", "--kernel-threads", "2"]) == \
            "python benchmarks/ops.py --kernel-threads 2"

    @staticmethod
    def fixture(tmp_path):
        """Two benchmarks' results, as a full run writes them."""
        common = {"machine": {"cpu": "Test CPU", "cores": 2, "os": "Linux"},
                  "torch": "2.13.0", "python": "3.11.7", "date": "2026-11-28T02:30:00+00:00",
                  "commit": "abc1234"}
        ops = {"benchmark": "ops", "title": "Per-operator speed", "what": "Operators.",
               "command": "python benchmarks/ops.py --kernel-threads 2",
               "settings": {"kernel_threads": 1}, **common,
               "cases": [{"name": "geomean, 1K", "ratio": 0.77, "spread": [0.75, 0.8],
                          "rounds": 6, "target": 1.1},
                         {"name": "geomean, 1M", "ratio": 0.89, "spread": [0.85, 0.93],
                          "rounds": 6, "target": None},
                         {"name": "_foreach_add_, 1K", "ratio": 1.31, "spread": [1.0, 1.6],
                          "rounds": 18, "target": 1.3, "note": "fell back: aten::x"}]}
        compile_ = {"benchmark": "compile", "title": "torch.compile", "what": "Compiled.",
                    "command": "python benchmarks/compile.py", "settings": {}, **common,
                    "commit": None,
                    "cases": [{"name": "chain 4M: eager openreg / compiled openreg", "ratio": 2.3,
                               "spread": [2.1, 2.5], "rounds": 9, "target": [1.5, None]},
                              {"name": "CNN training step: compiled openreg / CPU",
                               "ratio": 1.62, "spread": [1.5, 1.7], "rounds": 9, "target": 1.1},
                              {"name": "launch", "value": 12.345, "unit": "µs a call",
                               "spread": [10.0, 140.0], "rounds": 3, "target": [0.9, 1.1]}]}
        for result in (ops, compile_):
            (tmp_path / f"{result['benchmark']}.json").write_text(json.dumps(result))
        return tmp_path

    def test_page(self, tmp_path):
        directory = self.fixture(tmp_path)
        assert results.main(["--results", str(directory), "--output", str(tmp_path / "p.md")]) == 0
        page = (tmp_path / "p.md").read_text(encoding="utf-8")
        assert page.startswith("# Performance\n") and "median of the per-round ratios" in page
        assert page.index("## Per-operator speed") < page.index("## torch.compile")  # ORDER
        assert "`python benchmarks/ops.py --kernel-threads 2`" in page
        assert "Run on Test CPU, 2 cores, Linux; torch 2.13.0, Python 3.11.7; " \
               "2026-11-28 02:30 UTC; commit `abc1234`. Settings: kernel_threads 1." in page
        assert "| geomean, 1K | 0.77 | 0.75–0.80 | 6 | ≤ 1.10 |  |" in page
        assert "| \\_foreach\\_add\\_, 1K | 1.31 | 1.00–1.60 | 18 | ≤ 1.30 | fell back: aten::x |" \
            in page
        assert "commit unknown" in page
        assert "| chain 4M: eager openreg / compiled openreg | 2.30 | 2.10–2.50 | 9 | ≥ 1.50 |" \
            in page
        assert "| launch | 12.3 µs a call | 10.0–140 | 3 | 0.90–1.10 |" in page

    def test_readme_block(self, tmp_path):
        directory = self.fixture(tmp_path)
        readme = tmp_path / "README.md"
        readme.write_text(f"# x\n\n{results.START}\nold\n{results.END}\n\nafter\n")
        args = ["--results", str(directory)]
        assert results.main([*args, "--check-readme", str(readme)]) == 1
        assert results.main([*args, "--readme", str(readme)]) == 0
        text = readme.read_text(encoding="utf-8")
        assert text.startswith(f"# x\n\n{results.START}\n| figure |") and "old" not in text
        assert text.endswith(f"{results.END}\n\nafter\n")
        # The headline rows of the benchmarks with a result, each linking to its data, with its
        # kernel threads where they are not the machine's cores; run.py and the others have none
        # here, so no row.
        rows = [line for line in text.splitlines() if line.startswith("| [")]
        assert rows == [
            "| [Operators models call, at 1,024 elements (geometric mean) (kernels on 1 thread)]"
            "(benchmarks/results/ops.json) | 0.77 | 0.75–0.80 | ≤ 1.10 |",
            "| [The same operators at 1,048,576 elements (geometric mean) (kernels on 1 "
            "thread)](benchmarks/results/ops.json) | 0.89 | 0.85–0.93 |  |",
            "| [CNN training step under torch.compile](benchmarks/results/compile.json) | 1.62 "
            "| 1.50–1.70 | ≤ 1.10 |"]
        assert results.main([*args, "--check-readme", str(readme)]) == 0

    def test_check_readme_finds_a_stale_table(self, tmp_path):
        directory = self.fixture(tmp_path)
        readme = tmp_path / "README.md"
        readme.write_text(f"{results.START}\n{results.END}\n")
        assert results.main(["--results", str(directory), "--readme", str(readme)]) == 0
        ops = json.loads((directory / "ops.json").read_text())
        ops["cases"][0]["ratio"] = 0.81  # a newer run
        (directory / "ops.json").write_text(json.dumps(ops))
        assert results.main(["--results", str(directory), "--check-readme", str(readme)]) == 1
        readme.write_text("no markers\n")
        assert results.main(["--results", str(directory), "--check-readme", str(readme)]) == 1

    @pytest.mark.parametrize("change", [
        {"ratio": None}, {"value": 1.0}, {"spread": [1.0]}, {"rounds": 0},
        {"target": [None, None]}, {"target": "<= 1.1"}])
    def test_malformed_results_are_refused(self, tmp_path, change):
        directory = self.fixture(tmp_path)
        ops = json.loads((directory / "ops.json").read_text())
        ops["cases"][0].update(change)
        (directory / "ops.json").write_text(json.dumps(ops))
        with pytest.raises(ValueError, match="ops.json: case 0"):
            results.load(directory)
        assert results.main(["--results", str(directory)]) == 1

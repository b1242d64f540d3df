"""Runs PyTorch's own device-generic test files on openreg and on the CPU, and compares them.

    python tools/pytorch_tests.py --tests-dir ~/pytorch/test                # the default files
    python tools/pytorch_tests.py --tests-dir ~/pytorch/test test_shape_ops.py
    python tools/pytorch_tests.py --tests-dir ~/pytorch/test --check        # fail on news

PyTorch's test files (test/test_*.py of its repository) are not in the wheel; the helpers they
import (torch.testing._internal) are. Each file runs twice under pytest, in subprocesses:
once with PYTORCH_TESTING_DEVICE_ONLY_FOR=cpu, the reference, and once with
=openreg. A test is compared when it passed on the CPU and PyTorch's own decorators did not
restrict it to another device; it then passes for openreg when it passes there too.

A crash kills only the subprocess: the test that was running is recorded as `crash` (or
`timeout`, past --timeout seconds) and pytest starts again without the tests already done.
Writes docs/pytorch-tests/report.json (one entry per file; a file run again replaces its own
entry), which the testing chapter renders. --check fails when a test fails on openreg that
EXPECTED_FAILURES does not list, or when a listed one passes.

This module is also the pytest plugin of the subprocesses (`-p pytorch_tests`).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "docs" / "pytorch-tests" / "report.json"

# LITERALINCLUDE START: PYTORCH_TESTS_FILES
# Smallest first. A file whose value is a class names only its device-generic class: the others
# in it are not instantiated per device, and test CPU-only behaviour.
FILES = {
    "test_shape_ops.py": None,
    "test_view_ops.py": None,
    "test_indexing.py": None,
    "test_tensor_creation_ops.py": None,
    "test_reductions.py": None,
    "test_autograd.py": "TestAutogradDeviceType",
    "test_torch.py": None,
    "test_nn.py": "TestNNDeviceType",
}
# LITERALINCLUDE END: PYTORCH_TESTS_FILES

# LITERALINCLUDE START: PYTORCH_TESTS_DEVICE_SPECIFIC
# PyTorch's decorators skip a test on a device it was not written for (onlyCPU, onlyCUDA,
# onlyOn, onlyNativeDeviceTypes, ...): the skip reason says so. Such a test is not counted.
DEVICE_SPECIFIC = re.compile(r"Only runs on|doesn't run on|onlyAccelerator|"
                             r"only runs on|[Oo]nly (?:CPU|CUDA)")
# LITERALINCLUDE END: PYTORCH_TESTS_DEVICE_SPECIFIC

# LITERALINCLUDE START: PYTORCH_TESTS_TABLES
# Tests that assume a particular device without a decorator saying so: not counted. Keys are
# fnmatch patterns over "file::Class.test", the device taken out of both names.
SKIPS: dict[str, str] = {
    "test_torch.py::TestTorchDeviceType.test_tensor_storage_type_*":
        "expects torch.<Type>Storage for every device but CUDA; PyTorch looks an openreg "
        "tensor's storage class up in torch.openreg, as it looks CUDA's up in torch.cuda",
    "test_torch.py::TestTorchDeviceType.test_broadcast_fn_map*":
        "returns early for CUDA alone: Tensor.map_ and map2_ are implemented for CPU tensors only",
    "test_nn.py::TestNNDeviceType.test_upsamplingBiMode2d_nonsupported_dtypes_*uint8_uint8":
        "expects every device but the CPU to refuse uint8 bilinear and bicubic, as CUDA does; "
        "openreg runs the CPU's kernel, which has them",
    "test_indexing.py::NumpyTests.test_trivial_fancy_out_of_bounds":
        "skipped by PyTorch on CUDA and XPU, whose kernels find an out-of-bounds index on the "
        "device; openreg's do too, and report it at the next synchronization",
    "test_nn.py::TestNNDeviceType.test_transformerencoderlayer_float32":
        "expects the encoder layer's inference fast path (NaN for a fully masked row) on CPU and "
        "CUDA alone; PyTorch's module takes it on PrivateUse1 devices too",
}

# Known openreg failures, with their cause: still counted as failures, and --check fails once
# one of them passes, so a fix cannot leave its entry behind.
EXPECTED_FAILURES: dict[str, str] = {
    # By design: openreg has no nested tensors.
    "test_nn.py::TestNNDeviceType.test_TransformerEncoderLayer_empty":
        "also runs the layer on an empty nested tensor; openreg has no nested tensors",
    # Statistics on the device's own random numbers, which differ from the CPU's.
    "test_reductions.py::TestReductions.test_ref_extremal_values_*sum_complex64":
        "compares the sum of five random complex values, one of them infinite, with NumPy's: "
        "with an infinite real part the two libraries' imaginary parts differ in the last bit "
        "for many inputs (the CPU's own sum fails the comparison on 35 of 100 seeds); the "
        "test's seed gives the CPU values that pass, and the device's draws differ from the "
        "CPU's, while the device's sum of the same values equals the CPU's bit for bit",
    "test_torch.py::TestTorchDeviceType.test_cauchy_kstest_bfloat16":
        "bfloat16 values near 50 are 0.25 apart, so the Kolmogorov-Smirnov statistic of "
        "cauchy_(50, 0.5) sits at the test's 0.1 bound: the CPU's own draws exceed it in 3 "
        "of 20 seeds, and the test's seed gives the device a draw that does",
    "test_nn.py::TestNNDeviceType.test_GroupNorm_general":
        "normalizes groups of two random values with eps=0, so the mean of the output is "
        "only as small as the two values are far apart; the device's draws (not the CPU's) "
        "give a pair that misses the 1e-5 bound, and the CPU's kernel gives the device's "
        "output bit for bit on the same input",
}
# LITERALINCLUDE END: PYTORCH_TESTS_TABLES

# LITERALINCLUDE START: PYTORCH_TESTS_REASONS
# A failure's reason, from its exception and message; the first pattern that matches wins.
REASONS = [
    ("late kernel error", r"kernel failed on the device"),
    ("not implemented", r"NotImplementedError|not implemented|Could not run|no kernel|"
                        r"doesn't support|not supported|only supports .* device"),
    ("did not raise", r"not raised|did not raise|DID NOT RAISE"),
    ("warning not emitted", r"[Ww]arning not triggered|warning.* not (?:raised|emitted)|"
                            r"expected .*warning"),
    ("wrong dtype/stride/layout", r"attribute '(?:dtype|stride|layout|device)'|"
                                  r"\bstrides?\b|is_contiguous|memory_format"),
    ("mismatch", r"are not (?:close|equal)|[Mm]ismatch|not equal|!=|AssertionError: False"),
    ("different error", r"does not match"),
]
# LITERALINCLUDE END: PYTORCH_TESTS_REASONS


def classify(outcome: str, message: str) -> str:
    """The reason of a failed test: its outcome for a crash or timeout, else by its message."""
    if outcome in ("crash", "timeout"):
        return outcome
    for reason, pattern in REASONS:
        if re.search(pattern, message):
            return reason
    return "other"


def test_key(nodeid: str) -> str:
    """`file::Class.test` with the device taken out of both, so CPU and openreg runs meet."""
    file, _, rest = nodeid.partition("::")
    cls, _, name = rest.rpartition("::")
    # PrivateUse1TestBase names the first class it builds after the dispatch key and, once it
    # knows the backend's name, the later ones after the backend.
    cls = re.sub(r"(CPU|PRIVATEUSE1|OPENREG)$", "", cls)
    name = re.sub(r"^(.*)_(?:cpu|openreg)(?=_|\[|$)", r"\1", name)
    return f"{Path(file).name}::{cls}.{name}"


def listed(table: dict[str, str], key: str) -> str | None:
    """The reason of the first pattern of `table` that matches `key`, if any."""
    return next((why for pattern, why in table.items() if fnmatch.fnmatchcase(key, pattern)), None)


# ---- the pytest plugin, inside each subprocess -------------------------------------------------
# LITERALINCLUDE START: PYTORCH_TESTS_PLUGIN
# One JSON line before and one after each test, flushed: when the interpreter dies, the last
# "start" without its result names the test that killed it.
_log = _faults = None
_phases: dict[str, list] = {}


def pytest_configure(config):
    global _log, _faults
    if "PYTORCH_TESTS_LOG" not in os.environ:
        return
    import faulthandler

    import torch_openreg  # noqa: F401  before common_device_type: it adds PrivateUse1TestBase

    _log = open(os.environ["PYTORCH_TESTS_LOG"], "a", buffering=1)  # noqa: SIM115
    _faults = open(os.environ["PYTORCH_TESTS_FAULTS"], "a")  # noqa: SIM115
    faulthandler.enable(_faults)


def pytest_collection_modifyitems(config, items):
    if _log is None:
        return
    done = set(Path(os.environ["PYTORCH_TESTS_DONE"]).read_text().splitlines())
    keep = [item for item in items if item.nodeid not in done]
    config.hook.pytest_deselected(items=[item for item in items if item.nodeid in done])
    items[:] = keep


def pytest_runtest_logstart(nodeid, location):
    if _log is None:
        return
    import faulthandler

    _phases[nodeid] = []
    _log.write(json.dumps({"start": nodeid}) + "\n")
    # A hang: dump the stacks and end the process; the runner records a timeout.
    faulthandler.dump_traceback_later(float(os.environ["PYTORCH_TESTS_TIMEOUT"]), exit=True,
                                      file=_faults)


def pytest_runtest_logreport(report):
    if _log is not None:
        _phases.setdefault(report.nodeid, []).append(report)


def pytest_runtest_logfinish(nodeid, location):
    if _log is None:
        return
    import faulthandler

    faulthandler.cancel_dump_traceback_later()
    outcome, message = "passed", ""
    for report in _phases.pop(nodeid, []):
        if hasattr(report, "wasxfail"):
            outcome, message = "xfailed", str(report.wasxfail)
        elif report.skipped:
            outcome = "skipped"
            message = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
        elif report.failed:
            outcome = "failed"
            crash = getattr(report.longrepr, "reprcrash", None)
            message = crash.message if crash is not None else str(report.longrepr)[-2000:]
            break
    _log.write(json.dumps({"result": nodeid, "outcome": outcome, "message": message[:2000]})
               + "\n")
# LITERALINCLUDE END: PYTORCH_TESTS_PLUGIN


# ---- the runner ---------------------------------------------------------------------------------
# LITERALINCLUDE START: PYTORCH_TESTS_RUN_FILE
def run_file(tests_dir: Path, name: str, device: str, timeout: float) -> dict[str, dict]:
    """{nodeid: {"outcome", "message"}} of one file on one device, restarted past each crash."""
    results: dict[str, dict] = {}
    work = Path(tempfile.mkdtemp(prefix="pytorch-tests-"))
    (work / "pytest.ini").write_text("[pytest]\n")
    log, faults, done = work / "log.jsonl", work / "faults.txt", work / "done.txt"
    env = {**os.environ, "PYTORCH_TESTING_DEVICE_ONLY_FOR": device,
           "PYTORCH_PRINT_REPRO_ON_FAILURE": "0",
           "PYTORCH_TESTS_LOG": str(log), "PYTORCH_TESTS_FAULTS": str(faults),
           "PYTORCH_TESTS_DONE": str(done), "PYTORCH_TESTS_TIMEOUT": str(timeout),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "tools"), str(ROOT),
                                          os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "pytest", str(tests_dir / name), "-q", "-p", "pytorch_tests",
               "-p", "no:faulthandler", "-p", "no:cacheprovider", "-c", str(work / "pytest.ini"),
               "--rootdir", str(tests_dir), "--confcutdir", str(tests_dir)]
    if FILES.get(name):
        command += ["-k", FILES[name]]
    while True:
        done.write_text("\n".join(results))
        log.write_text("")
        faults.write_text("")
        proc = subprocess.run(command, env=env, cwd=tests_dir, capture_output=True, text=True)
        running = None
        for line in log.read_text().splitlines():
            record = json.loads(line)
            if "start" in record:
                running = record["start"]
            else:
                results[record["result"]] = {"outcome": record["outcome"],
                                             "message": record["message"]}
                running = None
        if running is None:  # pytest ended by itself
            if proc.returncode not in (0, 1, 5) and not results:
                raise RuntimeError(f"pytest {name} on {device} exited with {proc.returncode}:\n"
                                   f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
            if proc.returncode not in (0, 1, 5):
                print(f"  pytest exited with {proc.returncode} after its last test", flush=True)
            return results
        trace = faults.read_text()
        outcome = "timeout" if trace.startswith("Timeout") else "crash"
        first = trace.strip().splitlines()[0] if trace.strip() else f"exit {proc.returncode}"
        results[running] = {"outcome": outcome, "message": first}
        print(f"  {outcome}: {running} ({first}); restarting without it", flush=True)
# LITERALINCLUDE END: PYTORCH_TESTS_RUN_FILE


# LITERALINCLUDE START: PYTORCH_TESTS_COMPARE
def compare(name: str, cpu: dict[str, dict], openreg: dict[str, dict]) -> dict:
    """The file's counts and its openreg failures, by test name without the device."""
    cpu = {test_key(k): v for k, v in cpu.items()}
    openreg = {test_key(k): v for k, v in openreg.items()}
    counts, skips = Counter(), Counter()
    failures = []
    for key, ref in sorted(cpu.items()):
        counts["cpu tests"] += 1
        if ref["outcome"] != "passed":
            continue
        counts["cpu passed"] += 1
        mine = openreg.get(key)
        # Skipped by PyTorch's decorators, or not instantiated for openreg (only_for, dtypesIfCPU).
        if mine is None or (mine["outcome"] == "skipped"
                            and DEVICE_SPECIFIC.search(mine["message"])):
            counts["device-specific"] += 1
            continue
        if listed(SKIPS, key):
            counts["listed skips"] += 1
            continue
        if mine["outcome"] == "skipped":
            counts["skipped on openreg"] += 1
            skips[mine["message"][:120]] += 1
            continue
        counts["compared"] += 1
        expected = listed(EXPECTED_FAILURES, key)
        if mine["outcome"] == "passed":
            counts["openreg passed"] += 1
            if expected:
                failures.append({"test": key, "outcome": "passed", "reason": "expected to fail",
                                 "message": "", "expected": expected})
            continue
        reason = classify(mine["outcome"], mine["message"])
        counts[reason] += 1
        failures.append({"test": key, "outcome": mine["outcome"], "reason": reason,
                         "message": mine["message"][:500], "expected": expected})
    return {"file": name, "only": FILES.get(name), "counts": dict(counts),
            "skips": dict(skips.most_common()), "failures": failures}
# LITERALINCLUDE END: PYTORCH_TESTS_COMPARE


# LITERALINCLUDE START: PYTORCH_TESTS_CHECK
def check(entry: dict) -> list[str]:
    """What --check objects to: unlisted failures, and listed failures that pass now."""
    problems = []
    for failure in entry["failures"]:
        known = listed(EXPECTED_FAILURES, failure["test"])
        if failure["outcome"] == "passed":
            if known:
                problems.append(f"{failure['test']} passes now: remove it from EXPECTED_FAILURES")
        elif not known:
            problems.append(f"{failure['test']} fails ({failure['reason']}): "
                            f"{failure['message'][:200]}")
    return problems
# LITERALINCLUDE END: PYTORCH_TESTS_CHECK


def load_tables(path: str | None) -> None:
    """Replaces SKIPS and EXPECTED_FAILURES with those of another Python file (tests use this)."""
    if path:
        namespace: dict = {}
        exec(Path(path).read_text(), namespace)
        SKIPS.clear()
        SKIPS.update(namespace.get("SKIPS", {}))
        EXPECTED_FAILURES.clear()
        EXPECTED_FAILURES.update(namespace.get("EXPECTED_FAILURES", {}))


REASON_ORDER = ["late kernel error", "not implemented", "did not raise", "mismatch",
                "wrong dtype/stride/layout", "warning not emitted", "different error", "crash",
                "timeout", "other"]


def render(report: dict) -> str:
    """The testing chapter's per-file table (Markdown), from the report."""
    lines = ["| file | CPU passed | device-specific | other skips | compared | openreg passed | "
             "failed: reasons | of them listed |",
             "|---|---:|---:|---:|---:|---:|---|---:|"]
    for entry in report["files"]:
        c = entry["counts"]
        reasons = ", ".join(f"{reason} {c[reason]}" for reason in REASON_ORDER if c.get(reason))
        name = entry["file"] + (f" ({entry['only']})" if entry["only"] else "")
        known = sum(1 for f in entry["failures"]
                    if f["outcome"] != "passed" and listed(EXPECTED_FAILURES, f["test"]))
        rate = (f" ({100 * c.get('openreg passed', 0) / c['compared']:.1f} %)"
                if c.get("compared") else "")
        lines.append(f"| `{name}` | {c.get('cpu passed', 0)} | {c.get('device-specific', 0)} | "
                     f"{c.get('skipped on openreg', 0) + c.get('listed skips', 0)} | "
                     f"{c.get('compared', 0)} | {c.get('openreg passed', 0)}{rate} | "
                     f"{reasons or '–'} | {known} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", help="test files (default: every file of FILES)")
    parser.add_argument("--tests-dir", help="the folder holding PyTorch's test files")
    parser.add_argument("--output", default=str(REPORT), help="the report to write or update")
    parser.add_argument("--timeout", type=float, default=300, help="seconds one test may take")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 on an unlisted failure or a listed failure that passes")
    parser.add_argument("--tables", help="a Python file defining SKIPS and EXPECTED_FAILURES "
                                         "instead of this module's")
    parser.add_argument("--render", metavar="MARKDOWN",
                        help="only write the per-file table of --output's report to MARKDOWN")
    args = parser.parse_args(argv)
    output = Path(args.output)
    if args.render:
        Path(args.render).write_text(render(json.loads(output.read_text())))
        return 0
    if not args.tests_dir:  # --check alone: the committed report against the tables
        if not args.check:
            parser.error("--tests-dir is required to run tests")
        load_tables(args.tables)
        report = json.loads(output.read_text())
        problems = [p for entry in report["files"] for p in check(entry)]
        print("\n".join(problems) or "every failure is listed, and every listed test fails")
        return 1 if problems else 0
    tests_dir = Path(args.tests_dir).resolve()
    names = args.files or list(FILES)
    missing = [n for n in names if not (tests_dir / n).is_file()]
    if missing:
        parser.error(f"not in {tests_dir}: {', '.join(missing)}")
    load_tables(args.tables)
    import torch

    report = json.loads(output.read_text()) if output.is_file() else {"files": []}
    report.update(torch=torch.__version__, timeout=args.timeout)
    problems = []
    for name in names:
        started = time.monotonic()
        print(f"{name}: cpu", flush=True)
        cpu = run_file(tests_dir, name, "cpu", args.timeout)
        print(f"{name}: openreg", flush=True)
        openreg = run_file(tests_dir, name, "openreg", args.timeout)
        entry = compare(name, cpu, openreg)
        entry["seconds"] = round(time.monotonic() - started)
        report["files"] = [e for e in report["files"] if e["file"] != name] + [entry]
        order = list(FILES)
        report["files"].sort(key=lambda e: order.index(e["file"]) if e["file"] in order else 99)
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(report, indent=1) + "\n")
        print(f"{name}: {json.dumps(entry['counts'])}", flush=True)
        problems += check(entry)
    if args.check and problems:
        print("\n".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

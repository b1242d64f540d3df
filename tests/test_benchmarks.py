"""The benchmark harness runs (numbers are measured by hand, never asserted in tests)."""

import subprocess
import sys

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

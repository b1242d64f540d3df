"""Stress (tools/stress.py): 8 threads x 4 streams x 2 devices, every result checked."""

import subprocess
import sys

from conftest import ROOT


def test_short_stress_run_is_correct_and_leaks_nothing():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "stress.py"), "--seconds", "12"],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "8 threads x 4 streams x 2 devices for 12 s" in out
    assert "mismatches or errors: 0; threads still running: 0" in out
    assert "back to baseline" in out
    verified = int(out.split("s: ")[1].split(" operations")[0])
    assert verified > 100

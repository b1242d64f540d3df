"""Overview (docs/overview.md): device memory is out of the host's reach, and work is queued."""

from conftest import run_example


def test_overview_example():
    out = run_example("overview.py")
    assert "child exited with -11" in out
    assert "10 matmuls queued in" in out

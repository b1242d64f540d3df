"""The quick start (docs/index.md, and the autoload chapter): nothing but `import torch`."""

from conftest import ROOT, run_example


def test_quickstart_runs_with_only_import_torch():
    assert "torch_openreg" not in (ROOT / "examples" / "quickstart.py").read_text()
    out = run_example("quickstart.py")
    assert "OpenReg backend is available!" in out
    assert "Device of y: openreg:0" in out
    assert "[5., 6.]]" in out

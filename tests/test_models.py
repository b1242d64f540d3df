"""Ordinary models train on openreg natively: zero fallbacks, the CPU's results."""

from conftest import ROOT, run_python


def test_cnn_and_transformer_train_without_fallbacks():
    result = run_python((ROOT / "examples" / "train_models.py").read_text(), timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("CNN: loss cpu") and lines[0].endswith("parameters match: True")
    assert lines[1].startswith("transformer: loss cpu") and lines[1].endswith("parameters match: True")
    assert lines[2] == "no operator fell back to the CPU"
    cpu, dev = lines[0].split("cpu ")[1].split(" openreg ")
    assert abs(float(cpu) - float(dev.split(",")[0])) < 1e-5

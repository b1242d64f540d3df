"""The example files the guide includes: each runs, and prints what the guide says it prints."""

from conftest import ROOT, run_python


def run_example(name: str) -> str:
    result = run_python((ROOT / "examples" / name).read_text())
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_dispatch_tools():
    out = run_example("dispatch_tools.py")
    assert "DispatchKeySet(PrivateUse1, ADInplaceOrView, AutogradPrivateUse1" in out
    assert "aten::add.Tensor             openreg kernel" in out
    assert "aten::sin                    CPU fallback" in out
    assert "PrivateUse1            OpenRegNative.cpp" in out


def test_dispatch_trace():
    out = run_example("dispatch_trace.py")
    assert "TORCH_SHOW_DISPATCH_TRACE in torch 2.13.0" in out
    for op in ("aten.mul.Tensor", "aten.sin.default", "aten.cos.default"):
        assert f"{op}" in out
    assert "openreg:0" in out and "cpu" not in out.split("trace lines", 1)[1]

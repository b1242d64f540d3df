"""Tools (docs/tools.md): the dispatcher's tables and the dispatch trace, as the examples print
them."""

from conftest import run_example


def test_tools_example():
    out = run_example("tools.py")
    assert "DispatchKeySet(PrivateUse1, ADInplaceOrView, AutogradPrivateUse1" in out
    assert "aten::add.Tensor             openreg kernel" in out
    assert f"{'aten::_cummax_helper':28} no openreg kernel" in out
    assert "PrivateUse1            OpenRegNative.cpp" in out


def test_tools_trace_example():
    out = run_example("tools_trace.py")
    assert "TORCH_SHOW_DISPATCH_TRACE in torch 2.13.0" in out
    for op in ("aten.mul.Tensor", "aten.sin.default", "aten.cos.default"):
        assert f"{op}" in out
    assert "openreg:0" in out and "cpu" not in out.split("trace lines", 1)[1]

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


def test_device_memory():
    out = run_example("device_memory.py")
    assert "child exited with -11" in out
    assert "10 matmuls queued in" in out


def test_libraries():
    out = run_example("libraries.py")
    assert "loads libtorch_bindings.so" in out
    assert "libtorch_bindings.so                       loads libtorch_openreg.so\n" in out
    assert "libtorch_openreg.so                        loads libopenreg.so" in out
    assert "libopenreg.so                              loads (no openreg library)" in out


def test_tensors():
    out = run_example("tensors.py")
    assert "[30., 40., 50.]]" in out and "view shares storage: True" in out
    assert "resized: (4, 3) first rows kept: [[0.0, 1.0, 2.0], [30.0, 40.0, 50.0]]" in out
    assert "openreg:1 torch.float64 2.0" in out


def test_runtime_services():
    out = run_example("runtime_services.py")
    assert "allocated: 4194304 bytes" in out and "after del: 0 bytes" in out
    assert "OutOfMemoryError: Tried to allocate 4.00 TiB (device 0; 8.00 GiB total" in out
    assert "seed: 2024 state bytes: 16" in out and "default generators: [7, 7]" in out

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
    assert f"{'aten::_cummax_helper':28} CPU fallback" in out
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


def test_streams_events():
    out = run_example("streams_events.py")
    assert "priority 0" in out and "result matches the CPU: True" in out
    assert "matmul on the side stream took" in out


def test_memory_management():
    out = run_example("memory_management.py")
    assert "allocated: 4194304 reserved: 20971520" in out
    assert "after empty_cache: reserved 0" in out
    assert "Summary of segments" in out and "total_allocated: 3.0MiB" in out
    assert "OutOfMemoryError: OpenReg out of memory. Tried to allocate 4.00 TiB" in out
    assert "OOMs so far: 1" in out and "pinned: True" in out
    assert f"sum on the device: {float(sum(range(1 << 20)))}" in out


def test_random_numbers():
    out = run_example("random_numbers.py")
    assert "same seed, same numbers: True" in out and "device 1 untouched: True" in out
    assert "initial seed after fork_rng: 0" in out


def test_lifecycle():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, str(ROOT / "examples" / "lifecycle.py")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "initialized before first use: False" in out and "initialized after: True" in out
    assert "forked child: " in out and "'spawn' start method" in out
    assert "spawned child 0: 2.0" in out and "spawned child 1: 4.0" in out


def test_accelerator_api():
    out = run_example("accelerator_api.py")
    assert "accelerator: openreg devices: 2" in out
    assert "x on openreg:1 | y on openreg:1" in out
    assert "supports bfloat16: True | quantized qint8: False" in out


def test_graphs():
    out = run_example("graphs.py")
    assert "replayed 10 steps in" in out and "matches the CPU: True" in out


def test_stubs():
    out = run_example("stubs.py")
    assert "dispatch stubs in torch 2.13.0" in out and "abs_stub is among them: True" in out


def test_fallback_report():
    out = run_example("fallback_report.py")
    assert "2 warnings for 4 fallbacks, first: 'aten::_cummax_helper'" in out
    assert "strict mode: NotImplementedError: 'aten::_cummax_helper' is not implemented" in out
    assert "refused: 'aten::tril_indices' is not implemented for openreg" in out


def test_autograd_example():
    out = run_example("autograd_example.py")
    assert "SeluFunction" in out and "gradcheck selu: True" in out
    assert "loss matches the CPU: True" in out and "fallbacks during backward: {}" in out

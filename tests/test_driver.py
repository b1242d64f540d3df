"""The emulated driver (third_party/openreg): its C++ test binary, and isolation seen from Python."""

import signal
import subprocess

from conftest import ROOT, run_python

DRIVER_TESTS = ROOT / "build" / "cmake" / "bin" / "openreg_driver_tests"


def test_driver_binary_passes():
    """Memory isolation, copy directions, stream order, events, multi-device, error strings."""
    assert DRIVER_TESTS.exists(), f"build the project first: {DRIVER_TESTS} is missing"
    result = subprocess.run([str(DRIVER_TESTS)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 failed" in result.stdout


def test_host_read_of_device_tensor_faults():
    """Dereferencing a device pointer on the host crashes, as on real hardware."""
    code = (
        "import ctypes, torch\n"
        "t = torch.ones(4, device='openreg')\n"
        "print('value', ctypes.c_float.from_address(t.data_ptr()).value)\n"
    )
    result = run_python(code)
    assert result.returncode == -signal.SIGSEGV, result
    assert "value" not in result.stdout


def test_host_write_of_device_tensor_faults():
    code = (
        "import ctypes, torch\n"
        "t = torch.ones(4, device='openreg')\n"
        "ctypes.c_float.from_address(t.data_ptr()).value = 2.0\n"
        "print('wrote')\n"
    )
    result = run_python(code)
    assert result.returncode == -signal.SIGSEGV, result
    assert "wrote" not in result.stdout


def test_device_count_from_environment():
    code = "import torch; print(torch.openreg.device_count())"
    assert run_python(code, env={"OPENREG_DEVICE_COUNT": "3"}).stdout.strip() == "3"


def test_launch_blocking_reports_kernel_errors_at_the_call():
    """With OPENREG_LAUNCH_BLOCKING=1 a launch waits, so results are ready when it returns."""
    code = (
        "import torch\n"
        "a = torch.ones(1000, device='openreg')\n"
        "b = (a * 3 + a).cpu()\n"
        "print(int(b.sum()))\n"
    )
    result = run_python(code, env={"OPENREG_LAUNCH_BLOCKING": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "4000"

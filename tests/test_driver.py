"""The emulated driver (third_party/openreg): its C++ test binary, and isolation seen from
Python."""

import json
import signal
import subprocess

from conftest import cpp_program, run_python


def test_driver_binary_passes(tmp_path):
    """The driver's GoogleTest binary (third_party/openreg/tests): memory, host faults on device
    pointers, copies, streams and launches, events, graphs, IPC, activity records, errors and
    injected faults, forked children. Every test passes, and every mechanism's tests ran."""
    binary = cpp_program("openreg_driver_tests")
    report = tmp_path / "driver_tests.json"
    result = subprocess.run([str(binary), f"--gtest_output=json:{report}"],
                            check=False, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    summary = json.loads(report.read_text())
    failed = [f"{suite['name']}.{case['name']}" for suite in summary["testsuites"]
              for case in suite["testsuite"] if case.get("failures")]
    assert failed == [], result.stdout[-4000:]
    assert summary["failures"] == 0 and summary["errors"] == 0
    suites = {suite["name"] for suite in summary["testsuites"]}
    assert suites >= {"Device", "Memory", "HostFaultDeathTest", "Copy", "Stream", "Launch", "Event",
                      "Graph", "Ipc", "Activity", "Error", "Fault", "ForkDeathTest"}, suites


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

"""Troubleshooting (docs/troubleshooting.md): every message the chapter explains, as users see
it."""

from conftest import run_example


def test_troubleshooting_example():
    out = run_example("troubleshooting.py")
    assert "Invalid openreg device index 7: this process has 2 openreg device(s)" in out
    assert ("Expected all tensors to be on the same device" in out
            and "openreg:0 and openreg:1" in out)
    assert "OutOfMemoryError: OpenReg out of memory. Tried to allocate 16.00 TiB" in out
    assert "'aten::from_file' is not implemented for openreg, and cannot fall back" in out
    assert "Could not run 'aten::sin' with arguments from the 'NestedTensoropenreg'" in out
    blocking_off, blocking_on = out.split("OPENREG_LAUNCH_BLOCKING=1")
    assert "raised at synchronize: OpenReg error: kernel failed on the device" in blocking_off
    assert "raised at the launch: OpenReg error: kernel failed on the device" in blocking_on
    assert "exit code -11" in out and 'File "<string>", line 4' in out
    assert "streams with pending work: [1]" in out and "after synchronize: []" in out
    assert ("mse_loss, out= a 0-dim tensor: An output with one or more elements was resized"
            in out)
    assert "the loss is still right: True" in out

"""torch.openreg device management: count, current device, context manager, properties, errors."""

import pytest
import torch

from conftest import run_example


def test_availability_and_count():
    assert torch.openreg.is_available()
    assert torch.openreg.device_count() == 2
    assert torch.accelerator.current_accelerator() == torch.device("openreg")


def test_set_device_changes_where_tensors_go():
    try:
        torch.openreg.set_device(1)
        assert torch.openreg.current_device() == 1
        assert torch.empty(1, device="openreg").device == torch.device("openreg:1")
    finally:
        torch.openreg.set_device(0)
    assert torch.empty(1, device="openreg").device == torch.device("openreg:0")


def test_device_context_manager_restores():
    with torch.openreg.device(1):
        assert torch.openreg.current_device() == 1
        with torch.openreg.device("openreg:0"):
            assert torch.openreg.current_device() == 0
        assert torch.openreg.current_device() == 1
    assert torch.openreg.current_device() == 0


def test_current_device_is_per_thread():
    import threading

    seen = []
    with torch.openreg.device(1):
        worker = threading.Thread(target=lambda: seen.append(torch.openreg.current_device()))
        worker.start()
        worker.join()
    assert seen == [0]


def test_properties_and_name():
    props = torch.openreg.get_device_properties(1)
    assert props["name"] == torch.openreg.get_device_name(1) == "OpenReg Emulated Device"
    assert props["total_memory"] > 0


@pytest.mark.parametrize("make", [
    lambda: torch.empty(1, device="openreg:2"),
    lambda: torch.ones(3, device="openreg:99"),
    lambda: torch.openreg.set_device(5),
    lambda: torch.openreg.get_device_properties(7),
    lambda: torch.arange(3).to("openreg:4"),
])
def test_invalid_index_names_index_and_count(make):
    with pytest.raises(RuntimeError, match=r"openreg device index \d+: this process has 2"):
        make()


def test_synchronize_waits_for_queued_work():
    x = torch.ones(1 << 20, device="openreg")
    for _ in range(5):
        x = x * 2
    torch.openreg.synchronize()
    torch.openreg.synchronize("openreg:1")
    assert x.cpu()[0].item() == 32.0


def test_device_example():
    out = run_example("device.py")
    assert "openreg:1 openreg:1 tensor([1., 2., 3., 4.])" in out
    assert "bad index: Invalid openreg device index 99" in out
    assert "mixed devices: Expected all tensors to be on the same device" in out


def test_generated_methods():
    x = torch.ones(2)
    assert not x.is_openreg
    y = x.openreg()
    assert y.is_openreg and y.device.type == "openreg"
    assert y.untyped_storage().is_openreg
    m = torch.nn.Linear(2, 2).openreg(1)
    assert m.weight.device == torch.device("openreg:1")


def test_guard_streams_and_events():
    """The guard's stream and event parts, reached through torch.Stream and torch.Event."""
    side = torch.Stream(device="openreg")
    assert side != torch.accelerator.current_stream()
    start = torch.Event(device="openreg", enable_timing=True)
    end = torch.Event(device="openreg", enable_timing=True)
    x = torch.randn(1024, 1024, device="openreg")  # queued on the default stream
    side.wait_stream(torch.accelerator.current_stream())  # ... so the side stream must wait
    with side:  # exchangeStream in and out
        assert torch.accelerator.current_stream() == side
        start.record()
        y = x @ x
        end.record()
    assert torch.accelerator.current_stream().stream_id == 0
    end.synchronize()
    assert end.query()
    assert start.elapsed_time(end) > 0
    side.synchronize()
    torch.testing.assert_close(y.cpu(), x.cpu() @ x.cpu())

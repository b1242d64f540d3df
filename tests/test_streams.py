"""Streams and events: pools and priorities, the current stream, ordering that is real.

Cross-stream ordering is made observable with `gate` (conftest.py): a host function queued
through the driver's C API holds a stream until the test releases it.
"""

import threading
import time

import pytest
import torch

from conftest import driver, gate, run_example


def test_stream_classes_and_pool():
    s = torch.openreg.Stream()
    high = torch.openreg.Stream(priority=-1)
    assert isinstance(s, torch.Stream) and s.device == torch.device("openreg:0")
    assert s.priority == 0 and high.priority == -1
    assert s.stream_id != 0 and high.stream_id != s.stream_id
    assert torch.openreg.Stream("openreg:1").device_index == 1
    generic = torch.Stream(device="openreg")  # the device-generic class reaches the same pool
    assert generic.device_type == s.device_type


def test_current_and_default_streams():
    default = torch.openreg.default_stream()
    assert default.stream_id == 0 and torch.openreg.current_stream() == default
    s = torch.openreg.Stream()
    with torch.openreg.stream(s):
        assert torch.openreg.current_stream() == s
        assert torch.openreg.current_stream("openreg:1").stream_id == 0  # per device
    assert torch.openreg.current_stream() == default
    torch.openreg.set_stream(s)
    try:
        assert torch.openreg.current_stream() == s
    finally:
        torch.openreg.set_stream(default)


def test_a_stream_context_of_another_device_restores_the_current_device():
    """Entering a stream of openreg:1 makes openreg:1 current (work goes to the stream); leaving
    it restores openreg:0 and openreg:1's previous stream, as torch.cuda.stream does. A context
    that left openreg:1 current sent later work of the caller to the wrong device."""
    assert torch.openreg.current_device() == 0
    side = torch.openreg.Stream(device=1)
    with torch.openreg.stream(side):
        assert torch.openreg.current_device() == 1 and torch.openreg.current_stream() == side
        assert torch.ones(1, device="openreg").device == torch.device("openreg:1")
    assert torch.openreg.current_device() == 0
    assert torch.openreg.current_stream(1).stream_id == 0
    assert torch.ones(1, device="openreg").device == torch.device("openreg:0")


def test_current_stream_is_per_thread():
    s = torch.openreg.Stream()
    seen = []
    with torch.openreg.stream(s):
        t = threading.Thread(target=lambda: seen.append(torch.openreg.current_stream().stream_id))
        t.start()
        t.join()
    assert seen == [0]


def test_work_on_another_stream_is_not_visible_until_waited():
    src = torch.ones(1 << 16, device="openreg")
    side = torch.openreg.Stream()
    result = torch.zeros(1 << 16, device="openreg")
    side.wait_stream(torch.openreg.current_stream())  # src and result are ready first
    with gate(side):
        with torch.openreg.stream(side):
            result.copy_(src * 5)  # queued behind the gate
        # .cpu() synchronizes the default stream only: the side stream's work
        # has not run, so its result is not visible.
        assert torch.equal(result.cpu(), torch.zeros(1 << 16))
        torch.openreg.current_stream().wait_stream(side)
        late = result.clone()  # queued behind the side stream's work
        assert not torch.openreg.current_stream().query()  # it is waiting
    assert torch.equal(late.cpu(), torch.full((1 << 16,), 5.0))


def test_wait_event_orders_one_event():
    side = torch.openreg.Stream()
    done = torch.openreg.Event()
    x = torch.zeros(8, device="openreg")
    side.wait_stream(torch.openreg.current_stream())
    with gate(side):
        with torch.openreg.stream(side):
            x.fill_(3)
            done.record()
        assert not done.query()
        torch.openreg.current_stream().wait_event(done)
        y = x + 1
    assert done.query()
    assert torch.equal(y.cpu(), torch.full((8,), 4.0))


def test_events_time_work_like_the_wall_clock():
    side = torch.openreg.Stream()
    start = torch.openreg.Event(enable_timing=True)
    end = torch.openreg.Event(enable_timing=True)
    start.record(side)
    began = time.perf_counter()
    with gate(side):
        end.record(side)
        time.sleep(0.2)
    end.synchronize()
    wall_ms = (time.perf_counter() - began) * 1000
    assert abs(start.elapsed_time(end) - wall_ms) < 0.1 * wall_ms
    generic = torch.Event(device="openreg", enable_timing=True)
    generic.record()
    generic.synchronize()
    assert generic.query()


def test_event_without_timing_refuses_elapsed_time():
    a, b = torch.openreg.Event(), torch.openreg.Event()
    a.record()
    b.record()
    b.synchronize()
    with pytest.raises(RuntimeError, match="two events created with timing"):
        a.elapsed_time(b)


def test_record_stream_delays_reuse():
    side = torch.openreg.Stream()
    n = 1 << 18
    x = torch.ones(n, device="openreg")
    address = x.data_ptr()
    side.wait_stream(torch.openreg.current_stream())
    with gate(side):
        with torch.openreg.stream(side):
            y = x * 2  # side reads x after the gate
        x.record_stream(side)
        del x
        z = torch.empty(n, device="openreg")  # same size, same stream as x
        assert z.data_ptr() != address  # x's block waits for the side stream
    side.synchronize()
    del z
    w = torch.empty(n, device="openreg")
    assert w.data_ptr() in (address, w.data_ptr())  # reusable again (the allocator may pick it)
    assert torch.equal(y.cpu(), torch.full((n,), 2.0))


def test_without_record_stream_the_block_is_reused_at_once():
    x = torch.ones(1 << 18, device="openreg")
    address = x.data_ptr()
    del x
    assert torch.empty(1 << 18, device="openreg").data_ptr() == address


def test_external_stream():
    lib = driver()
    import ctypes

    handle = ctypes.c_void_p()
    assert lib.orStreamCreate(ctypes.byref(handle)) == 0
    try:
        ext = torch.openreg.ExternalStream(handle.value)
        assert ext.native_handle == handle.value
        with torch.openreg.stream(ext):
            x = torch.arange(4.0, device="openreg") * 3
        assert torch.openreg.ExternalStream(handle.value) == ext  # the same id again
        lib.orStreamSynchronize(handle)
        ext.synchronize()
        assert torch.equal(x.cpu(), torch.arange(4.0) * 3)
    finally:
        lib.orStreamDestroy(handle)


def test_streams_example():
    out = run_example("streams.py")
    assert "priority 0" in out and "result matches the CPU: True" in out
    assert "matmul on the side stream took" in out

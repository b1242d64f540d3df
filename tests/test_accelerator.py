"""Conformance of torch.accelerator on openreg: every function, checked by its effect."""

import threading
import time

import pytest
import torch

from conftest import gate, run_example

A = torch.accelerator


def test_identity():
    assert A.current_accelerator() == torch.device("openreg")
    assert A.is_available() and A.device_count() == torch.openreg.device_count() == 2


def test_device_index_moves_new_tensors():
    assert A.current_device_index() == 0
    A.set_device_index(1)
    try:
        assert A.current_device_index() == 1 == torch.openreg.current_device()
        assert torch.empty(1, device="openreg").device.index == 1
    finally:
        A.set_device_index(0)
    with A.device_index(1):
        assert torch.empty(1, device="openreg").device.index == 1
    assert torch.empty(1, device="openreg").device.index == 0
    with pytest.raises(RuntimeError, match="openreg device index 5"):
        A.set_device_index(5)


def test_streams_take_effect():
    s = torch.Stream(device="openreg")
    previous = A.current_stream()
    A.set_stream(s)
    try:
        assert A.current_stream() == s
        with gate(s):
            y = torch.ones(4, device="openreg") + 1  # queued on s, behind the gate
            assert not s.query()
    finally:
        A.set_stream(previous)
    assert s.query() and torch.equal(y.cpu(), torch.full((4,), 2.0))


def test_synchronize_waits_for_all_streams_of_the_device():
    s = torch.Stream(device="openreg")
    with gate(s) as release:
        threading.Timer(0.2, release).start()
        began = time.perf_counter()
        A.synchronize()
        assert time.perf_counter() - began >= 0.15
    assert s.query()


def test_memory_functions_follow_allocations():
    torch.openreg.synchronize()
    A.empty_cache()
    A.reset_peak_memory_stats(0)
    A.reset_accumulated_memory_stats(0)
    free_before, total = A.get_memory_info(0)
    x = torch.empty(8 << 20, dtype=torch.uint8, device="openreg")
    assert A.memory_allocated(0) >= 8 << 20 and A.memory_reserved(0) >= 8 << 20
    assert A.get_memory_info(0)[0] <= free_before - (8 << 20) and A.get_memory_info(0)[1] == total
    del x
    assert A.max_memory_allocated(0) >= 8 << 20 and A.max_memory_reserved(0) >= 8 << 20
    stats = A.memory_stats(0)
    assert stats["allocation.all.allocated"] >= 1 and stats["allocation.all.freed"] >= 1
    A.reset_peak_memory_stats(0)
    assert A.max_memory_allocated(0) == A.memory_allocated(0)
    A.reset_accumulated_memory_stats(0)
    assert A.memory_stats(0)["allocation.all.allocated"] == 0
    A.empty_cache()
    assert A.memory_reserved(0) == 0 and A.get_memory_info(0)[0] == free_before


def test_empty_host_cache_releases_pinned_memory():
    x = torch.empty(1 << 20).pin_memory()
    del x
    assert torch.openreg.host_memory_stats()["allocated_bytes"]["current"] > 0
    A.empty_host_cache()
    assert torch.openreg.host_memory_stats()["allocated_bytes"]["current"] == 0


def test_device_capability():
    dtypes = A.get_device_capability(0)["supported_dtypes"]
    for dtype in (torch.float32, torch.bfloat16, torch.int8, torch.complex64, torch.bool):
        assert dtype in dtypes
    for dtype in (torch.qint8, torch.quint8, torch.qint32):  # per-tensor quantized tensors
        assert dtype in dtypes
    assert torch.quint4x2 not in dtypes and torch.quint2x4 not in dtypes


def test_graph_captures_and_replays():
    x = torch.zeros(1000, device="openreg")
    s = torch.Stream(device="openreg")
    g = A.Graph()
    with s, g:
        assert s.is_capturing()
        y = x * 2 + 1  # y's memory belongs to the graph's pool
        x.add_(1)
    assert not s.is_capturing()
    assert torch.equal(x.cpu(), torch.zeros(1000))  # captured, not run
    address = y.data_ptr()
    for _ in range(3):
        g.replay()
    A.synchronize()
    assert torch.equal(x.cpu(), torch.full((1000,), 3.0))
    assert torch.equal(y.cpu(), torch.full((1000,), 5.0)) and y.data_ptr() == address
    other = torch.empty(1000, device="openreg")  # outside the pool: never y's memory
    assert other.data_ptr() != address
    g.reset()


def test_graph_pool_can_be_shared_and_debug_dumped(tmp_path):
    s = torch.Stream(device="openreg")
    x = torch.ones(10, device="openreg")
    g1 = A.Graph()
    with s, g1:
        a = x + 1
    g2 = A.Graph(pool=g1.pool())
    with s, g2:
        b = a * 3
    assert g2.pool() == g1.pool()  # the pool is taken at capture
    g1.replay()
    g2.replay()
    A.synchronize()
    assert torch.equal(b.cpu(), torch.full((10,), 6.0))
    g2.enable_debug_mode()
    g2.debug_dump(str(tmp_path / "graph.dot"))
    assert (tmp_path / "graph.dot").read_text().startswith("digraph")
    g1.reset()
    g2.reset()


def test_graph_capture_refuses_what_cannot_replay():
    s = torch.Stream(device="openreg")
    with pytest.raises(RuntimeError, match="cannot capture the default stream"):
        with A.Graph():
            pass
    with pytest.raises(RuntimeError, match="random operators cannot be captured"):
        with s, A.Graph():
            torch.randn(3, device="openreg")
    x = torch.ones(4, device="openreg")
    with pytest.raises(RuntimeError, match="not permitted while the stream is capturing"):
        with s, A.Graph():
            x.sum().item()  # reading back would wait for work that never runs
    assert not s.is_capturing()
    assert torch.ones(2, device="openreg").sum().item() == 2  # the device is fine afterwards


def test_accelerator_example():
    out = run_example("accelerator.py")
    assert "accelerator: openreg devices: 2" in out
    assert "x on openreg:1 | y on openreg:1" in out
    assert "supports bfloat16: True | quantized qint8: True | quint4x2: False" in out


def test_accelerator_graphs_example():
    out = run_example("accelerator_graphs.py")
    assert "replayed 10 steps in" in out and "matches the CPU: True" in out

"""The caching device allocator and pinned host memory, tested by their effects."""

import pickle
import textwrap

import pytest
import torch
import torch.cuda._memory_viz as memory_viz

from conftest import gate, run_example, run_python

MiB = 1 << 20


@pytest.fixture(autouse=True)
def clean_cache():
    torch.openreg.synchronize()
    torch.openreg.empty_cache()
    yield
    torch.openreg.empty_cache()


def segments_of(device=0):
    return [s for s in torch.openreg.memory_snapshot() if s["device"] == device]


def test_small_blocks_are_split_from_one_segment_and_merge_back():
    # In a fresh process: tensors other tests keep alive would share the segments.
    code = textwrap.dedent("""
        import torch
        MiB = 1 << 20
        def segments():
            return [s for s in torch.openreg.memory_snapshot() if s["device"] == 0]
        a = torch.empty(256, device="openreg")  # 1 KiB
        b = torch.empty(256, device="openreg")
        segs = segments()
        print(len(segs), segs[0]["total_size"] == 2 * MiB,
              [blk["state"] for blk in segs[0]["blocks"]])
        print(b.data_ptr() == a.data_ptr() + 1024)
        del a, b
        segs = segments()
        print([blk["state"] for blk in segs[0]["blocks"]], segs[0]["blocks"][0]["size"] == 2 * MiB)
    """)
    out = run_python(code).stdout.splitlines()
    assert out == ["1 True ['active_allocated', 'active_allocated', 'inactive']", "True",
                   "['inactive'] True"]


def test_freed_blocks_are_reused_without_the_driver():
    stats = torch.openreg.memory_stats()
    x = torch.empty(4 * MiB, dtype=torch.uint8, device="openreg")
    address = x.data_ptr()
    del x
    y = torch.empty(4 * MiB, dtype=torch.uint8, device="openreg")
    assert y.data_ptr() == address
    after = torch.openreg.memory_stats()
    assert after["num_device_alloc"] - stats["num_device_alloc"] == 1


def test_blocks_are_reused_only_by_their_stream():
    x = torch.empty(4 * MiB, dtype=torch.uint8, device="openreg")
    address = x.data_ptr()
    del x
    with torch.openreg.stream(torch.openreg.Stream()):
        y = torch.empty(4 * MiB, dtype=torch.uint8, device="openreg")
    assert y.data_ptr() != address


def test_empty_cache_returns_memory_to_the_driver():
    code = textwrap.dedent("""
        import torch
        MiB = 1 << 20
        free_before, total = torch.openreg.mem_get_info()
        x = torch.empty(64 * MiB, dtype=torch.uint8, device="openreg")
        del x
        print(torch.openreg.memory_reserved() == 64 * MiB,
              torch.openreg.mem_get_info()[0] == free_before - 64 * MiB)
        torch.openreg.empty_cache()
        print(torch.openreg.memory_reserved() == 0, torch.openreg.mem_get_info()[0] == free_before)
    """)
    assert run_python(code).stdout.split() == ["True"] * 4


def test_statistics_follow_allocations():
    torch.openreg.reset_peak_memory_stats()
    torch.openreg.reset_accumulated_memory_stats()
    base = torch.openreg.memory_allocated()
    x = torch.empty(3 * MiB, dtype=torch.uint8, device="openreg")
    y = torch.empty(5 * MiB, dtype=torch.uint8, device="openreg")
    assert torch.openreg.memory_allocated() - base == 8 * MiB
    del x
    assert torch.openreg.memory_allocated() - base == 5 * MiB
    assert torch.openreg.max_memory_allocated() - base == 8 * MiB
    stats = torch.openreg.memory_stats()
    assert stats["allocation.all.allocated"] == 2 and stats["allocation.all.freed"] == 1
    assert stats["active.all.current"] >= 1 and stats["active_bytes.all.current"] >= 5 * MiB
    assert stats["requested_bytes.all.current"] >= 5 * MiB
    assert stats["reserved_bytes.all.current"] == torch.openreg.memory_reserved()
    assert torch.accelerator.memory_allocated(0) == torch.openreg.memory_allocated()
    torch.openreg.reset_peak_memory_stats()
    assert torch.openreg.max_memory_allocated() == torch.openreg.memory_allocated()
    del y
    summary = torch.openreg.memory_summary()
    assert "Allocated memory" in summary and "Reserved segments" in summary


def test_out_of_memory_is_counted_and_survivable():
    before = torch.openreg.memory_stats().get("num_ooms", 0)
    with pytest.raises(torch.OutOfMemoryError, match="Tried to allocate 16.00 TiB"):
        torch.empty(1 << 42, device="openreg")
    assert torch.openreg.memory_stats()["num_ooms"] == before + 1
    assert torch.ones(4, device="openreg").sum().item() == 4


def test_memory_fraction_caps_the_process():
    code = (
        "import torch\n"
        "torch.openreg.set_per_process_memory_fraction(0.25)\n"
        "print(torch.openreg.get_per_process_memory_fraction())\n"
        "a = torch.empty(4 << 20, dtype=torch.uint8, device='openreg')\n"
        "try:\n"
        "    torch.empty(16 << 20, dtype=torch.uint8, device='openreg')\n"
        "except torch.OutOfMemoryError as e:\n"
        "    print('capped:', 'memory fraction 0.25' in str(e))\n"
        "torch.openreg.set_per_process_memory_fraction(1.0)\n"
        "b = torch.empty(16 << 20, dtype=torch.uint8, device='openreg')\n"
        "print('raised:', b.numel())\n"
    )
    result = run_python(code, env={"OPENREG_DEVICE_MEMORY": "64M"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:3] == ["0.25", "capped: True", f"raised: {16 << 20}"]


def test_caching_can_be_disabled():
    code = (
        "import torch\n"
        "x = torch.empty(1 << 20, device='openreg')\n"
        "del x\n"
        "print(torch.openreg.memory_reserved())\n"
    )
    cached = run_python(code).stdout.strip()
    uncached = run_python(code, env={"OPENREG_NO_MEMORY_CACHING": "1"}).stdout.strip()
    assert (cached, uncached) == (str(20 * MiB), "0")


def test_snapshot_is_readable_by_the_memory_visualizer(tmp_path):
    torch.openreg.memory._record_memory_history(max_entries=1000)
    try:
        x = torch.empty(2 * MiB, dtype=torch.uint8, device="openreg")
        y = torch.empty(100, device="openreg")
        del x
        snapshot = torch.openreg.memory._snapshot()
    finally:
        torch.openreg.memory._record_memory_history(enabled=None)
    actions = [e["action"] for e in snapshot["device_traces"][0]]
    assert actions[:2] == ["segment_alloc", "alloc"] and "free_completed" in actions
    assert "Summary of segments" in memory_viz.segsum(snapshot)
    trace = memory_viz.trace(snapshot)
    assert "cudaMalloc" in trace and "del " in trace  # the visualizer's own words
    assert "<!DOCTYPE html>" in memory_viz.trace_plot(snapshot)
    path = tmp_path / "snapshot.pickle"
    torch.openreg.memory._dump_snapshot(str(path))
    assert pickle.loads(path.read_bytes())["segments"]
    del y


def test_pinned_memory_and_its_cache():
    x = torch.arange(1024.0).pin_memory()
    assert x.is_pinned() and not torch.arange(3.0).is_pinned()
    stats = torch.openreg.host_memory_stats()
    assert stats["allocations"]["current"] >= 1 and stats["num_host_alloc"] >= 1
    address = x.data_ptr()
    del x
    assert torch.empty(1024).pin_memory().data_ptr() == address  # cached block reused
    torch.openreg.empty_host_cache()


def test_non_blocking_copies_overlap_and_are_ordered():
    src = torch.arange(1 << 16, dtype=torch.float32).pin_memory()
    dst = torch.empty(1 << 16, device="openreg")
    stream = torch.openreg.current_stream()
    with gate(stream):
        dst.copy_(src, non_blocking=True)  # returns while the stream is held
        assert not stream.query()
        doubled = dst * 2  # ordered after the copy on the same stream
        back = torch.empty(1 << 16).pin_memory()
        back.copy_(doubled, non_blocking=True)
        assert not stream.query()
    torch.openreg.synchronize()
    assert torch.equal(back, torch.arange(1 << 16, dtype=torch.float32) * 2)


def test_pinned_block_is_not_reused_before_its_copy_ran():
    stream = torch.openreg.current_stream()
    dst = torch.empty(1 << 16, device="openreg")
    with gate(stream):
        src = torch.ones(1 << 16).pin_memory()
        address = src.data_ptr()
        dst.copy_(src, non_blocking=True)
        del src
        other = torch.empty(1 << 16).pin_memory()  # must not overwrite the pending source
        assert other.data_ptr() != address
    torch.openreg.synchronize()
    assert torch.equal(dst.cpu(), torch.ones(1 << 16))



@pytest.mark.parametrize("call", [
    lambda d: torch.openreg.memory_stats(d),
    lambda d: torch.openreg.reset_peak_memory_stats(d),
    lambda d: torch.openreg.reset_accumulated_memory_stats(d),
    lambda d: torch.openreg.set_per_process_memory_fraction(0.5, d),
    lambda d: torch.openreg.get_per_process_memory_fraction(d),
    lambda d: torch.openreg.mem_get_info(d),
    lambda d: torch.accelerator.memory_stats(d),
    lambda d: torch.accelerator.reset_peak_memory_stats(d),
], ids=["stats", "reset_peak", "reset_accumulated", "set_fraction", "get_fraction", "mem_get_info",
        "accelerator_stats", "accelerator_reset_peak"])
@pytest.mark.parametrize("device", [7, -3])
def test_every_per_device_call_checks_the_index(call, device):
    """The per-device allocator is reached through one accessor, which validates the index."""
    expected = f"Invalid openreg device index {device}: this process has 2"
    with pytest.raises(RuntimeError, match=expected):
        call(device)


def test_memory_example():
    out = run_example("memory.py")
    assert "allocated: 4194304 reserved: 20971520" in out
    assert "after empty_cache: reserved 0" in out
    assert "Summary of segments" in out and "total_allocated: 3.0MiB" in out
    assert "OutOfMemoryError: OpenReg out of memory. Tried to allocate 4.00 TiB" in out
    assert "OOMs so far: 1" in out and "pinned: True" in out
    assert f"sum on the device: {float(sum(range(1 << 20)))}" in out

"""Device and pinned-host memory of torch.openreg: statistics, caching, history and limits."""

from collections import OrderedDict
from typing import Any

import torch
from torch_openreg import _C

from ._utils import _get_device_index

_DeviceLike = torch.device | str | int | None


# LITERALINCLUDE START: MEMORY_PYTHON_STATS
def memory_stats(device: _DeviceLike = None) -> "OrderedDict[str, Any]":
    """The caching allocator's statistics, with the keys torch.cuda.memory_stats uses."""
    return torch.accelerator.memory_stats(_get_device_index(device, optional=True))


def memory_allocated(device: _DeviceLike = None) -> int:
    """Bytes occupied by tensors on ``device``."""
    return torch.accelerator.memory_allocated(_get_device_index(device, optional=True))


def max_memory_allocated(device: _DeviceLike = None) -> int:
    """The peak of memory_allocated since start or reset_peak_memory_stats."""
    return torch.accelerator.max_memory_allocated(_get_device_index(device, optional=True))


def memory_reserved(device: _DeviceLike = None) -> int:
    """Bytes the allocator holds from the driver (allocated plus cached)."""
    return torch.accelerator.memory_reserved(_get_device_index(device, optional=True))


def max_memory_reserved(device: _DeviceLike = None) -> int:
    """The peak of memory_reserved since start or reset_peak_memory_stats."""
    return torch.accelerator.max_memory_reserved(_get_device_index(device, optional=True))


def reset_peak_memory_stats(device: _DeviceLike = None) -> None:
    """Starts the peaks again from the current values."""
    torch.accelerator.reset_peak_memory_stats(_get_device_index(device, optional=True))


def reset_accumulated_memory_stats(device: _DeviceLike = None) -> None:
    """Zeroes the running totals (allocated, freed, retries, OOMs)."""
    torch.accelerator.reset_accumulated_memory_stats(_get_device_index(device, optional=True))


def empty_cache() -> None:
    """Returns every cached, unused segment to the driver."""
    torch.accelerator.empty_cache()
# LITERALINCLUDE END: MEMORY_PYTHON_STATS


def mem_get_info(device: _DeviceLike = None) -> tuple[int, int]:
    """(free, total) bytes of ``device`` as the driver sees them."""
    return torch.accelerator.get_memory_info(_get_device_index(device, optional=True))


def set_per_process_memory_fraction(fraction: float, device: _DeviceLike = None) -> None:
    """Caps what this process may reserve on ``device`` at ``fraction`` of its memory."""
    _C._set_memory_fraction(float(fraction), _get_device_index(device, optional=True))


def get_per_process_memory_fraction(device: _DeviceLike = None) -> float:
    """The fraction set by set_per_process_memory_fraction (1.0 by default)."""
    return _C._get_memory_fraction(_get_device_index(device, optional=True))


def _record_memory_history(enabled: bool | str | None = "all", max_entries: int = 100000) -> None:
    """Starts (or, with enabled=None/False, stops) recording allocator events for snapshots."""
    _C._record_memory_history(bool(enabled), int(max_entries))


def memory_snapshot() -> list:
    """The segments and blocks of every device, as torch.cuda.memory_snapshot() lists them."""
    return _C._memory_snapshot()["segments"]


def _snapshot() -> dict:
    """Segments and recorded events in the format PyTorch's memory visualizer reads.

    Save it with pickle and open it at pytorch.org/memory_viz, or feed it to
    torch.cuda._memory_viz (segsum, trace, trace_plot).
    """
    return _C._memory_snapshot()


def _dump_snapshot(filename: str = "dump_snapshot.pickle") -> None:
    """Pickles _snapshot() to ``filename`` for the memory visualizer."""
    import pickle

    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f)


def host_memory_stats() -> dict:
    """Statistics of the pinned host memory cache."""
    return _C._host_memory_stats()


def empty_host_cache() -> None:
    """Returns cached, unused pinned host memory to the driver."""
    torch.accelerator.empty_host_cache()


def memory_summary(device: _DeviceLike = None, abbreviated: bool = False) -> str:
    """A table of the allocator's statistics, current / peak / allocated / freed."""
    index = _get_device_index(device, optional=True)
    stats = memory_stats(index)
    rows = [("Allocated memory", "allocated_bytes", True), ("Active memory", "active_bytes", True),
            ("Requested memory", "requested_bytes", True),
            ("Reserved memory", "reserved_bytes", True),
            ("Non-releasable memory", "inactive_split_bytes", True),
            ("Allocations", "allocation", False), ("Active allocs", "active", False),
            ("Reserved segments", "segment", False),
            ("Non-releasable allocs", "inactive_split", False)]
    pools = [("all", "")] if abbreviated else [("all", ""), ("large_pool", "  from large pool"),
                                               ("small_pool", "  from small pool")]

    def fmt(value: int, is_bytes: bool) -> str:
        if not is_bytes:
            return str(value)
        for unit in ("B  ", "KiB", "MiB", "GiB"):
            if abs(value) < 1024 or unit == "GiB":
                return f"{value:.0f} {unit}" if unit == "B  " else f"{value:.2f} {unit}"
            value /= 1024
        return str(value)

    width = 87
    lines = ["=" * width,
             f" openreg memory summary, device {index:<2d}  (OOMs: {stats.get('num_ooms', 0)}, "
             f"driver allocs: {stats.get('num_device_alloc', 0)}, "
             f"frees: {stats.get('num_device_free', 0)})",
             "-" * width,
             f" {'Metric':<30}| {'Cur Usage':>12} | {'Peak Usage':>12} | "
             f"{'Tot Alloc':>11} | {'Tot Freed':>11}",
             "-" * width]
    for label, key, is_bytes in rows:
        for pool, suffix in pools:
            values = [stats.get(f"{key}.{pool}.{field}", 0)
                      for field in ("current", "peak", "allocated", "freed")]
            lines.append(f" {(label if not suffix else suffix):<30}| "
                         f"{fmt(values[0], is_bytes):>12} | {fmt(values[1], is_bytes):>12} | "
                         f"{fmt(values[2], is_bytes):>11} | {fmt(values[3], is_bytes):>11}")
        lines.append("-" * width)
    lines.append("=" * width)
    return "\n".join(lines) + "\n"

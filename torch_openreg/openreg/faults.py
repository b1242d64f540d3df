"""Fault injection: make the emulated device fail on purpose, to test how code above it copes.

A real accelerator fails in ways a test cannot provoke: an allocation refused, a kernel that
faults, a copy that fails, a device that stalls. The emulated driver can do each on demand.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Literal
from collections.abc import Iterator

from torch_openreg import _C

FaultKind = Literal["alloc", "launch", "copy"]


# LITERALINCLUDE START: FAULTS_PYTHON_API

def inject(kind: FaultKind, nth: int = 1, times: int = 1) -> None:
    """Fail the ``nth`` through ``nth + times - 1``-th event of ``kind`` from now.

    ``"alloc"`` fails at the call (the caching allocator retries once after emptying its cache,
    so ``times=2`` is needed to see ``torch.OutOfMemoryError``); ``"launch"`` and ``"copy"`` fail
    on the stream and raise at the next synchronization, as a device fault would.
    """
    if not isinstance(nth, int) or nth < 0:
        raise ValueError(f"nth must be a non-negative int, got {nth!r}")
    if not isinstance(times, int) or times < 1:
        raise ValueError(f"times must be a positive int, got {times!r}")
    _C._inject_fault(kind, nth, times)


def clear() -> None:
    """Disarms every fault and removes any stream delay."""
    for kind in ("alloc", "launch", "copy"):
        _C._inject_fault(kind, 0, 1)
    _C._set_stream_delay(0)


@contextmanager
def stream_delay(microseconds: int) -> Iterator[None]:
    """Every task on every stream waits ``microseconds`` first, inside the block."""
    if not isinstance(microseconds, int) or microseconds < 0:
        raise ValueError(f"microseconds must be a non-negative int, got {microseconds!r}")
    _C._set_stream_delay(microseconds)
    try:
        yield
    finally:
        _C._set_stream_delay(0)
# LITERALINCLUDE END: FAULTS_PYTHON_API

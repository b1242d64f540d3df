"""Streams and events of torch.openreg, built on the device-generic torch.Stream and torch.Event."""

from typing import Any

import torch
from torch_openreg import _C

from ._utils import _get_device_index

_DeviceLike = torch.device | str | int | None
_PRIVATEUSE1 = 20  # c10::DeviceType::PrivateUse1: what torch.Stream(device_type=...) takes


# LITERALINCLUDE START: STREAMS_PYTHON_CLASSES
class Stream(torch.Stream):
    """An in-order queue of work on an openreg device (lower priority numbers run first)."""

    def __new__(cls, device: _DeviceLike = None, priority: int = 0, **kwargs: Any) -> "Stream":
        if "stream_id" in kwargs:  # re-wrapping an existing stream
            return super().__new__(cls, **kwargs)
        index = _get_device_index(device, optional=True)
        return super().__new__(cls, device=torch.device("openreg", index), priority=priority)

    @property
    def priority(self) -> int:
        """0 for normal streams, -1 for high priority ones (CUDA's convention)."""
        return _C._stream_priority(self.stream_id, self.device_index)


class ExternalStream(Stream):
    """Wraps a driver stream that another library created (an ``orStream_t`` as an int)."""

    def __new__(cls, stream_ptr: int, device: _DeviceLike = None) -> "ExternalStream":
        index = _get_device_index(device, optional=True)
        stream_id, index = _C._stream_from_external(stream_ptr, index)
        return super().__new__(cls, stream_id=stream_id, device_index=index,
                               device_type=_PRIVATEUSE1)


class Event(torch.Event):
    """A marker in a stream: record it, wait for it, time between two of them."""

    def __new__(cls, enable_timing: bool = False, blocking: bool = False,
                interprocess: bool = False) -> "Event":
        return super().__new__(cls, device="openreg", enable_timing=enable_timing,
                               blocking=blocking, interprocess=interprocess)

    def elapsed_time(self, end_event: torch.Event) -> float:
        """Milliseconds between this event and ``end_event`` (both recorded and complete)."""
        # torch.Event.elapsed_time accepts only exact torch.Event arguments.
        return _C._event_elapsed_time(self.event_id, end_event.event_id)
# LITERALINCLUDE END: STREAMS_PYTHON_CLASSES


# LITERALINCLUDE START: STREAMS_PYTHON_FUNCTIONS
def _wrap(stream: torch.Stream) -> Stream:
    return Stream(stream_id=stream.stream_id, device_index=stream.device_index,
                  device_type=_PRIVATEUSE1)


def current_stream(device: _DeviceLike = None) -> Stream:
    """The stream work on ``device`` is queued on by this thread."""
    return _wrap(torch.accelerator.current_stream(_get_device_index(device, optional=True)))


def default_stream(device: _DeviceLike = None) -> Stream:
    """The device's default stream (id 0)."""
    index = _get_device_index(device, optional=True)
    return Stream(stream_id=0, device_index=index, device_type=_PRIVATEUSE1)


def set_stream(stream: torch.Stream) -> None:
    """Makes ``stream`` the current stream of its device for this thread."""
    torch.accelerator.set_stream(stream)


class StreamContext:
    """``with torch.openreg.stream(s):`` queues work on ``s``, then restores the previous stream."""

    def __init__(self, stream: torch.Stream | None) -> None:
        self.stream = stream
        self.previous: torch.Stream | None = None
        self.previous_device = -1

    def __enter__(self) -> torch.Stream | None:
        if self.stream is not None:
            self.previous_device = torch.accelerator.current_device_index()
            self.previous = torch.accelerator.current_stream(self.stream.device_index)
            torch.accelerator.set_stream(self.stream)  # makes the stream's device current too
        return self.stream

    def __exit__(self, *exc: Any) -> None:
        if self.previous is not None:
            torch.accelerator.set_stream(self.previous)
            torch.accelerator.set_device_index(self.previous_device)  # as on entry, like CUDA's


def stream(stream: torch.Stream | None) -> StreamContext:
    """Context manager selecting ``stream`` (None: no change)."""
    return StreamContext(stream)
# LITERALINCLUDE END: STREAMS_PYTHON_FUNCTIONS

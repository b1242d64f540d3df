"""torch.openreg: the device module of the openreg backend (the counterpart of torch.cuda)."""

import atexit
import os
import threading
from dataclasses import dataclass
from typing import Any

import torch
from torch_openreg import _C

from . import distributed  # noqa: F401  (registers the orccl c10d backend on import)
from . import faults  # noqa: F401  (binds the public submodule torch.openreg.faults)
from ._utils import _get_device_index
from .amp import get_amp_supported_dtype, is_bf16_supported
from .fallback import fallback_counts, fallback_report, reset_fallback_counts
from .memory import (
    empty_cache,
    empty_host_cache,
    get_per_process_memory_fraction,
    host_memory_stats,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
)
from .random import _get_generator  # noqa: F401  (AOTAutograd's graph-safe RNG asks for it)
from .random import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from .serialization import internal_format, set_internal_format
from .sharing import ipc_collect
from .streams import (
    Event,
    ExternalStream,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    set_stream,
    stream,
)

_DeviceLike = torch.device | str | int | None

__all__ = [
    "Event",
    "ExternalStream",
    "Stream",
    "StreamContext",
    "current_stream",
    "default_stream",
    "empty_cache",
    "fallback_counts",
    "get_amp_supported_dtype",
    "is_bf16_supported",
    "fallback_report",
    "reset_fallback_counts",
    "empty_host_cache",
    "get_per_process_memory_fraction",
    "host_memory_stats",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_snapshot",
    "memory_stats",
    "memory_summary",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "set_per_process_memory_fraction",
    "set_stream",
    "stream",
    "current_device",
    "default_generators",
    "device",
    "device_count",
    "device_of",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_kernel_threads",
    "get_rng_state",
    "get_rng_state_all",
    "init",
    "initial_seed",
    "internal_format",
    "ipc_collect",
    "is_available",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "set_device",
    "set_internal_format",
    "set_kernel_threads",
    "set_rng_state",
    "set_rng_state_all",
    "synchronize",
]

# LITERALINCLUDE START: DEVICE_MODULE_LAZY_INIT
_initialized = False
_in_bad_fork = False
_init_lock = threading.Lock()


def is_initialized() -> bool:
    """Whether the device runtime has been initialized in this process."""
    return _initialized


def _is_in_bad_fork() -> bool:
    """True in a child forked after the runtime started: the device is unusable there."""
    return _in_bad_fork


def _lazy_init() -> None:
    """Initializes the runtime on first use; torch calls it for the first openreg tensor."""
    global _initialized
    if _initialized:
        return
    with _init_lock:
        if _in_bad_fork:
            raise RuntimeError(
                "Cannot re-initialize openreg in a forked subprocess: the runtime was started "
                "before the fork. To use openreg with multiprocessing, use the 'spawn' start "
                "method (multiprocessing.set_start_method('spawn') or torch.multiprocessing)."
            )
        if not _initialized:
            _C._init()
            _initialized = True


def init() -> None:
    """Initializes the runtime now instead of at the first device call, as ``torch.cuda.init``.

    Nothing needs to call it, since the first device call does; a program calls it to fail
    early on a broken installation. In a child forked after the runtime started it raises, as
    every device call there does.
    """
    _lazy_init()


def _after_fork_in_child() -> None:
    global _initialized, _in_bad_fork
    if _initialized:
        _initialized = False
        _in_bad_fork = True


os.register_at_fork(after_in_child=_after_fork_in_child)
# LITERALINCLUDE END: DEVICE_MODULE_LAZY_INIT


# LITERALINCLUDE START: DEVICE_MODULE_EXIT
def _settle_at_exit() -> None:
    """Before the interpreter finalizes: no autograd device thread may still hold
    tensors with Python objects (csrc/runtime/OpenRegExit.cpp says why)."""
    if _initialized and not _in_bad_fork:
        _C._settle_autograd_threads()


# atexit runs its functions before the interpreter starts to finalize, while
# other threads can still take the GIL.
atexit.register(_settle_at_exit)
# LITERALINCLUDE END: DEVICE_MODULE_EXIT


# LITERALINCLUDE START: DEVICE_MODULE_BASICS
def is_available() -> bool:
    """True when the driver reports at least one device."""
    return device_count() > 0


def device_count() -> int:
    """The number of openreg devices (``OPENREG_DEVICE_COUNT``, default 2)."""
    return _C._get_device_count()


def current_device() -> int:
    """The index of the current openreg device of this thread."""
    _lazy_init()
    return _C._get_device()


def set_device(device: _DeviceLike) -> None:
    """Makes ``device`` the current openreg device of this thread."""
    index = _get_device_index(device)
    if index >= 0:
        _lazy_init()
        _C._set_device(index)


def synchronize(device: _DeviceLike = None) -> None:
    """Waits for all work queued on every stream of ``device``."""
    _lazy_init()
    _C._synchronize(_get_device_index(device, optional=True))
# LITERALINCLUDE END: DEVICE_MODULE_BASICS


# LITERALINCLUDE START: DEVICE_DEVICE_DEF
class device:
    """Context manager that makes ``device`` current and restores the previous one.

    A negative index changes nothing, as in ``torch.cuda.device``: ``device_of`` passes -1 for
    an object that is not on an openreg device.
    """

    def __init__(self, device: _DeviceLike) -> None:
        self.index = _get_device_index(device, optional=True)
        self.previous = -1

    def __enter__(self) -> None:
        if self.index >= 0:
            _lazy_init()
            self.previous = _C._exchange_device(self.index)

    def __exit__(self, *exc: Any) -> None:
        if self.previous >= 0:
            _C._set_device(self.previous)


class device_of(device):
    """Context manager that makes the device of ``obj`` (a tensor or storage) current.

    For an object that is not on an openreg device it changes nothing.
    """

    def __init__(self, obj: Any) -> None:
        where = getattr(obj, "device", None)
        if not isinstance(where, torch.device):
            raise TypeError(f"device_of expects a tensor or a storage, got {type(obj).__name__}")
        super().__init__(where.index if where.type == "openreg" else -1)
# LITERALINCLUDE END: DEVICE_DEVICE_DEF


# LITERALINCLUDE START: DEVICE_PROPERTIES_DEF
@dataclass(frozen=True)
class _DeviceProperties:
    """What the driver says of one device, read as attributes like torch.cuda's properties
    (``torch.nn.DataParallel`` compares ``total_memory`` and ``multi_processor_count``)."""

    name: str
    total_memory: int
    major: int
    minor: int
    multi_processor_count: int
    physical_id: int


def get_device_properties(device: _DeviceLike = None) -> _DeviceProperties:
    """Name, total memory, version, processor count and physical id of ``device``."""
    _lazy_init()
    return _DeviceProperties(**_C._get_device_properties(_get_device_index(device, optional=True)))


def get_device_name(device: _DeviceLike = None) -> str:
    """The marketing name of ``device``."""
    return get_device_properties(device).name


def get_device_capability(device: _DeviceLike = None) -> tuple[int, int]:
    """The (major, minor) version of ``device``, as ``torch.cuda.get_device_capability``."""
    props = get_device_properties(device)
    return props.major, props.minor
# LITERALINCLUDE END: DEVICE_PROPERTIES_DEF


# LITERALINCLUDE START: DEVICE_KERNEL_THREADS
def set_kernel_threads(threads: int) -> None:
    """How many CPU threads each large openreg kernel's parallel loops use: 1 to the number of
    cores (by default, ``torch.get_num_threads()`` when the backend loaded); other values raise
    ``ValueError``. Kernels on fewer than 32,768 elements run on one thread whatever the count:
    waking another costs more than it saves.

    The device's kernels run on host threads and share the cores with the host's own CPU work;
    the device gives its extra threads back when it has idled for a millisecond.
    """
    _C._set_kernel_threads(threads)


def get_kernel_threads() -> int:
    """How many CPU threads each large openreg kernel's parallel loops use."""
    return _C._get_kernel_threads()
# LITERALINCLUDE END: DEVICE_KERNEL_THREADS


# LITERALINCLUDE START: GENERATOR_PYTHON_DEFAULTS
class _DefaultGenerators:
    """``torch.openreg.default_generators[i]``: device i's default torch.Generator."""

    def __init__(self) -> None:
        self._wrappers: dict[int, torch.Generator] = {}  # one Python object per device

    def __getitem__(self, index: int) -> torch.Generator:
        if not 0 <= index < device_count():
            raise IndexError(f"openreg device index {index} out of range "
                             f"({device_count()} devices)")
        if index not in self._wrappers:
            self._wrappers[index] = _C._get_default_generator(index)
        return self._wrappers[index]

    def __len__(self) -> int:
        return device_count()

    def __iter__(self):
        return (self[i] for i in range(len(self)))


default_generators = _DefaultGenerators()
# LITERALINCLUDE END: GENERATOR_PYTHON_DEFAULTS


# LITERALINCLUDE START: COMPILE_DEVICE_MODULE_HOOKS
# torch.compile: Inductor's backend loads on first use, Dynamo's interface when Dynamo loads.
from ._compile import inductor_attribute as __getattr__  # noqa: E402,F401  (PEP 562 module __getattr__)
from ._compile import install_dynamo_hook as _install_dynamo_hook  # noqa: E402

_install_dynamo_hook()
# LITERALINCLUDE END: COMPILE_DEVICE_MODULE_HOOKS

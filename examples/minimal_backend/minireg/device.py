# LITERALINCLUDE START: MINIMAL_BACKEND_DEVICE_MODULE
"""torch.minireg: what torch asks of a device module, from the library's C functions."""

from minireg import _lib


def device_count() -> int:
    return _lib.minireg_device_count()


def is_available() -> bool:
    return device_count() > 0


def current_device() -> int:
    return _lib.minireg_current_device()
# LITERALINCLUDE END: MINIMAL_BACKEND_DEVICE_MODULE

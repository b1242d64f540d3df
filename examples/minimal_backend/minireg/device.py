# LITERALINCLUDE START: MINIMAL_BACKEND_DEVICE_MODULE
"""torch.minireg: what torch asks of a device module, from the library's C functions."""

import ctypes

import torch

from minireg import _lib

_lib.minireg_manual_seed_all.argtypes = [ctypes.c_uint64]


def device_count() -> int:
    return _lib.minireg_device_count()


def is_available() -> bool:
    return device_count() > 0


def current_device() -> int:
    return _lib.minireg_current_device()


# torch.manual_seed(s) and torch.seed() seed this backend only if the module has both
# functions below: torch checks for the pair, asks _is_in_bad_fork() whether the device
# may be touched in this process, and then calls manual_seed_all(s). With either one
# missing, torch.manual_seed seeds the CPU alone and device random numbers do not repeat.
def _is_in_bad_fork() -> bool:
    # A driver whose context does not survive fork() answers True in a child forked after
    # the device was initialized. minidrv's memory is ordinary mappings, copied by fork().
    return False


def manual_seed_all(seed: int) -> None:
    _lib.minireg_manual_seed_all(int(seed) & 0xFFFF_FFFF_FFFF_FFFF)  # as torch wraps seeds


def manual_seed(seed: int) -> None:
    manual_seed_all(seed)  # one device


# torch.autocast(device_type="minireg") asks which dtypes it may cast to.
def get_amp_supported_dtype() -> list[torch.dtype]:
    return [torch.float16, torch.bfloat16]
# LITERALINCLUDE END: MINIMAL_BACKEND_DEVICE_MODULE

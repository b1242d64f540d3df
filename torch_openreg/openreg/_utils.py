"""Helpers shared by torch.openreg's modules; torch's serialization calls _get_device_index."""

import torch

_DeviceLike = torch.device | str | int | None


def _get_device_index(device: _DeviceLike, optional: bool = False) -> int:
    """Turns a device, string or int into an index; None means the current device."""
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "openreg":
            raise ValueError(f"expected an openreg device, got {device}")
        device = device.index
    if device is None:
        if not optional:
            raise ValueError("expected an openreg device index, got None")
        from . import current_device

        return current_device()
    if not isinstance(device, int):
        raise TypeError(f"cannot interpret {device!r} as an openreg device")
    return device

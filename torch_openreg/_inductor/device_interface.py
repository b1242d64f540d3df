"""Dynamo's view of openreg: how compiled code queries and switches devices and streams."""

from typing import Any

import torch
from torch._dynamo.device_interface import (
    DeviceInterface,
    caching_worker_current_devices,
    caching_worker_device_properties,
    register_interface_for_device,
)
from torch_openreg import _C

from .runtime import get_raw_stream


def _index(device: Any) -> int:
    if device is None:
        return torch.openreg.current_device()
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != "openreg":
        raise ValueError(f"expected an openreg device, got {device}")
    return torch.openreg.current_device() if device.index is None else device.index


def _properties(index: int) -> Any:
    return torch.openreg.get_device_properties(index)


# LITERALINCLUDE START: COMPILE_DEVICE_INTERFACE
class OpenRegInterface(DeviceInterface):
    """torch.openreg as Dynamo and Inductor reach it (the counterpart of CudaInterface)."""

    device = torch.openreg.device
    Event = torch.openreg.Event
    Stream = torch.openreg.Stream

    class Worker:
        """Queries that compile workers answer from values recorded in the parent process."""

        @staticmethod
        def set_device(device: int) -> None:
            caching_worker_current_devices["openreg"] = device

        @staticmethod
        def current_device() -> int:
            if "openreg" in caching_worker_current_devices:
                return caching_worker_current_devices["openreg"]
            return torch.openreg.current_device()

        @staticmethod
        def get_device_properties(device: Any = None) -> Any:
            if device is None:
                device = OpenRegInterface.Worker.current_device()
            if "openreg" not in caching_worker_device_properties:
                caching_worker_device_properties["openreg"] = [
                    _properties(i) for i in range(torch.openreg.device_count())
                ]
            return caching_worker_device_properties["openreg"][_index(device)]

    current_device = staticmethod(torch.openreg.current_device)
    set_device = staticmethod(torch.openreg.set_device)
    device_count = staticmethod(torch.openreg.device_count)
    is_available = staticmethod(torch.openreg.is_available)
    stream = staticmethod(torch.openreg.stream)
    current_stream = staticmethod(torch.openreg.current_stream)
    set_stream = staticmethod(torch.openreg.set_stream)
    synchronize = staticmethod(torch.openreg.synchronize)
    memory_allocated = staticmethod(torch.openreg.memory_allocated)
    get_raw_stream = staticmethod(get_raw_stream)

    @staticmethod
    def exchange_device(device: int) -> int:
        torch.openreg._lazy_init()
        return _C._exchange_device(device)

    @staticmethod
    def maybe_exchange_device(device: int) -> int:
        torch.openreg._lazy_init()
        return _C._exchange_device(device)

    @staticmethod
    def _set_stream_by_id(stream_id: int, device_index: int, device_type: int) -> None:
        torch.accelerator.set_stream(
            torch.Stream(stream_id=stream_id, device_index=device_index, device_type=device_type)
        )

    @staticmethod
    def get_device_properties(device: Any = None) -> Any:
        return _properties(_index(device))

    @staticmethod
    def get_compute_capability(device: Any = None) -> int:
        props = _properties(_index(device))
        return props.major * 10 + props.minor

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return True
# LITERALINCLUDE END: COMPILE_DEVICE_INTERFACE


# LITERALINCLUDE START: COMPILE_INTERFACE_REGISTRATION
def register_device_interface() -> None:
    """Registers OpenRegInterface for ``openreg`` and each ``openreg:<index>`` (idempotent)."""
    register_interface_for_device("openreg", OpenRegInterface)
    for index in range(torch.openreg.device_count()):
        register_interface_for_device(f"openreg:{index}", OpenRegInterface)
# LITERALINCLUDE END: COMPILE_INTERFACE_REGISTRATION

"""Inductor's openreg backend: registered when Inductor first asks the device module for it."""

from typing import Any

from torch._inductor.codegen.common import register_backend_for_device, register_device_op_overrides

from .device_interface import register_device_interface
from .device_op_overrides import OpenRegDeviceOpOverrides
from .scheduling import OpenRegScheduling
from .wrapper import OpenRegPythonWrapperCodegen


class OpenRegCppWrapperCodegen:
    """``config.cpp_wrapper`` would need the launch in C++ wrapper code; the Python wrapper is the supported path."""

    @staticmethod
    def create(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "torch.compile on openreg generates a Python wrapper; "
            "set torch._inductor.config.cpp_wrapper = False"
        )


# The names Inductor's init_backend_registration asks the device module for.
Scheduling = OpenRegScheduling
PythonWrapperCodegen = OpenRegPythonWrapperCodegen
CppWrapperCodegen = OpenRegCppWrapperCodegen


# LITERALINCLUDE START: COMPILE_REGISTER
def register() -> None:
    """Makes openreg known to Dynamo and Inductor (idempotent)."""
    register_device_interface()
    register_backend_for_device("openreg", OpenRegScheduling, OpenRegPythonWrapperCodegen,
                                OpenRegCppWrapperCodegen)
    register_device_op_overrides("openreg", OpenRegDeviceOpOverrides())
# LITERALINCLUDE END: COMPILE_REGISTER


register()

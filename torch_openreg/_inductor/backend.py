"""Inductor's openreg backend: registered when Inductor first asks the device module for it."""

from typing import Any

from torch._inductor.codegen.common import register_backend_for_device, register_device_op_overrides
from torch._inductor import config as inductor_config
from torch._inductor import ir, lowering
from torch._inductor import scheduler as scheduler_module
from torch._inductor import utils as inductor_utils
from torch._inductor.codegen import common as codegen_common
from torch._inductor.kernel import mm_common
from torch._inductor.scheduler import BaseSchedulerNode
from torch._inductor.virtualized import V

from .device_interface import register_device_interface
from .device_op_overrides import OpenRegDeviceOpOverrides
from .scheduling import OpenRegScheduling
from .wrapper import OpenRegPythonWrapperCodegen


class OpenRegCppWrapperCodegen:
    """``config.cpp_wrapper`` would need the launch in C++ wrapper code: not supported."""

    @staticmethod
    def create(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "torch.compile on openreg generates a Python wrapper; "
            "set torch._inductor.config.cpp_wrapper = False"
        )


# LITERALINCLUDE START: COMPILE_BACKEND_NAMES
# The names Inductor's init_backend_registration asks the device module for.
Scheduling = OpenRegScheduling
PythonWrapperCodegen = OpenRegPythonWrapperCodegen
CppWrapperCodegen = OpenRegCppWrapperCodegen
# LITERALINCLUDE END: COMPILE_BACKEND_NAMES


# LITERALINCLUDE START: COMPILE_CPP_CODEGEN_DEVICE
# Inductor (torch 2.13) asks two questions by device *name* where it means "which code
# generator": BaseSchedulerNode.is_cpu() (skip loop reorderings only Triton supports) and
# get_current_backend() (which dtype rules the kernel's operations follow). openreg
# kernels are C++ kernels, so both must answer as for the CPU. Two heuristics tuned for
# the C++ kernels also go by name: ir.is_cpu() (realize a reused result of exp/sigmoid/...
# instead of recomputing it) and the two-pass threshold of the variance's lowering.
_original_current_backend = inductor_utils.get_current_backend
_original_two_step_variance = lowering.use_two_step_variance


def _current_backend(device_type: str | None = None) -> str:
    if not device_type:
        device_type = V.graph.get_current_device_or_throw().type
    return "cpp" if device_type == "openreg" else _original_current_backend(device_type)


def _runs_cpp_codegen(node: BaseSchedulerNode) -> bool:
    device = node.get_device()
    return device is not None and device.type in ("cpu", "openreg")


def _two_step_variance(x: Any, axis: Any, keepdim: bool, input_dtype: Any) -> bool:
    device = x.get_device()
    if device is None or device.type != "openreg":
        return _original_two_step_variance(x, axis, keepdim, input_dtype)
    threshold = inductor_config.cpp.use_two_step_variance_threshold
    with inductor_config.patch(unroll_reductions_threshold=threshold):
        return _original_two_step_variance(x, axis, keepdim, input_dtype)


def _ir_is_cpu(x: Any) -> bool:
    return ir.get_device_type(x) in ("cpu", "openreg")


def _answer_as_cpp_codegen() -> None:
    BaseSchedulerNode.is_cpu = _runs_cpp_codegen
    ir.is_cpu = _ir_is_cpu
    lowering.use_two_step_variance = _two_step_variance
    for module in (inductor_utils, codegen_common, scheduler_module, mm_common):
        module.get_current_backend = _current_backend
# LITERALINCLUDE END: COMPILE_CPP_CODEGEN_DEVICE


# LITERALINCLUDE START: COMPILE_REGISTER
def register() -> None:
    """Makes openreg known to Dynamo and Inductor (idempotent)."""
    register_device_interface()
    register_backend_for_device("openreg", OpenRegScheduling, OpenRegPythonWrapperCodegen,
                                OpenRegCppWrapperCodegen)
    register_device_op_overrides("openreg", OpenRegDeviceOpOverrides())
    _answer_as_cpp_codegen()


register()
# LITERALINCLUDE END: COMPILE_REGISTER

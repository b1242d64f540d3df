"""Inductor's Python wrapper for openreg: cached buffers, launches on the current stream."""

from typing import Any

from torch._inductor.codegen.wrapper import PythonWrapperCodegen, SubgraphPythonWrapperCodegen


# LITERALINCLUDE START: COMPILE_WRAPPER
class OpenRegPythonWrapperCodegen(PythonWrapperCodegen):
    """The generated ``call()``: allocations are ``empty_strided(..., device='openreg:<index>')``
    (the caching allocator of that device), extern kernels are the eager openreg operators, and
    each generated kernel is an ``OpenRegKernel`` whose call queues it on the current stream."""

    @staticmethod
    def create(is_subgraph: bool, subgraph_name: str | None, parent_wrapper: Any,
               partition_signatures: Any = None) -> PythonWrapperCodegen:
        if is_subgraph:
            return SubgraphPythonWrapperCodegen(subgraph_name, parent_wrapper, partition_signatures)
        return OpenRegPythonWrapperCodegen()

    def make_allocation(self, name: str, device: Any, dtype: Any, shape: Any, stride: Any,
                        allocation_shape: Any = None, is_pinned: bool = False) -> str:
        line = super().make_allocation(name, device, dtype, shape, stride, allocation_shape,
                                       is_pinned)
        if device.type == "openreg" and device.index is not None:
            line = line.replace("device='openreg'", f"device='openreg:{device.index}'")
        return line

    def write_header(self) -> None:
        super().write_header()
        self.imports.writeline("from torch_openreg._inductor.runtime import openreg_kernel")

    def _generate_kernel_call_helper(self, kernel_name: str, call_args: list, *,
                                     device: Any = None, triton: bool = True,
                                     **kwargs: Any) -> None:
        if not triton and device is not None and device.type == "openreg":
            # The device rides with the call: Inductor opens no device guard for
            # devices outside its GPU list, so the launch selects the stream itself.
            launch_args = [*call_args, f"device={device.index}"]
            self.writeline(self.wrap_kernel_call(kernel_name, launch_args))
            return
        super()._generate_kernel_call_helper(kernel_name, call_args, device=device,
                                             triton=triton, **kwargs)
# LITERALINCLUDE END: COMPILE_WRAPPER

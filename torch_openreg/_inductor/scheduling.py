"""Inductor's scheduling for openreg: the CPU C++ code generator, plus a launchable entry point."""

from torch._inductor import config
from torch._inductor.codegen.common import Kernel
from torch._inductor.codegen.cpp import CppScheduling
from torch._inductor.utils import IndentedBuffer, Placeholder, get_fused_kernel_name
from torch._inductor.virtualized import V

BODY_NAME = "openreg_kernel_body"
_INTEGER_TYPES = {"int64_t", "int32_t", "int", "long", "bool", "uint64_t", "uint32_t"}
_FLOAT_TYPES = {"double", "float"}


# LITERALINCLUDE START: COMPILE_ENTRY_POINT
def entry_point_source(arg_types: list[str]) -> str:
    """C++ for ``kernel(void** args)``: unpacks the launch's slots into the typed kernel call.

    Pointer slots already hold kernel-view addresses (the launch translated them on
    the stream's worker); scalar slots point at an int64_t or a double.
    """
    operands = []
    for i, arg_type in enumerate(arg_types):
        bare = arg_type.replace("const ", "").strip()
        if bare.endswith("*"):
            operands.append(f"static_cast<{arg_type}>(args[{i}])")
        elif bare in _INTEGER_TYPES:
            operands.append(f"static_cast<{bare}>(*static_cast<const int64_t*>(args[{i}]))")
        elif bare in _FLOAT_TYPES:
            operands.append(f"static_cast<{bare}>(*static_cast<const double*>(args[{i}]))")
        else:
            raise NotImplementedError(
                f"openreg kernels cannot take an argument of C++ type {arg_type!r}")
    call = ",\n        ".join(operands)
    return (
        '\nextern "C" __attribute__((visibility("default"))) void kernel(void** args) {\n'
        f"    {BODY_NAME}(\n        {call});\n"
        "}\n"
    )
# LITERALINCLUDE END: COMPILE_ENTRY_POINT


# LITERALINCLUDE START: COMPILE_SCHEDULING
class OpenRegScheduling(CppScheduling):
    """CppScheduling's fusion and C++ generation; only the kernel's definition differs."""

    def define_kernel(self, src_code: str, nodes: list, kernel_args: Kernel | None = None) -> str:
        wrapper = V.graph.wrapper_code
        if src_code in wrapper.src_to_kernel:
            return wrapper.src_to_kernel[src_code]
        fused_name = get_fused_kernel_name(nodes, config.cpp.descriptive_names) \
            if config.cpp.descriptive_names else ""
        kernel_name = "_".join(["openreg", fused_name, wrapper.next_kernel_suffix()])
        wrapper.src_to_kernel[src_code] = kernel_name

        source = src_code.replace(str(Placeholder.KERNEL_NAME), BODY_NAME)
        source = source.replace(str(Placeholder.DESCRIPTIVE_NAME), kernel_name)
        source = source.replace("#pragma CMT", "//")
        args = self.kernel_group.args if kernel_args is None else kernel_args
        _, _, arg_types = args.cpp_argdefs()
        source += entry_point_source(arg_types)

        definition = IndentedBuffer()
        definition.writeline(f"openreg_kernel(async_compile, {arg_types!r}, r'''")
        definition.splice(source, strip=True)
        definition.writeline("''')")
        wrapper.define_kernel(kernel_name, definition.getvalue(), gpu=False)
        return kernel_name
# LITERALINCLUDE END: COMPILE_SCHEDULING

"""What the Python wrapper that Inductor generates for openreg imports at run time.

Kept free of Inductor imports: a cached compiled module loads this without loading the compiler.
"""

import ctypes
from typing import Any

from torch_openreg import _C


# LITERALINCLUDE START: COMPILE_RUNTIME_KERNEL
class OpenRegKernel:
    """A compiled kernel: calling it queues the kernel on the current stream of ``device``.

    ``entry`` is the address of the generated ``void kernel(void** args)`` in the
    shared library that Inductor's C++ code cache built on the host.
    """

    __slots__ = ("_function", "entry", "num_args")

    def __init__(self, function: ctypes._CFuncPtr, num_args: int) -> None:
        self._function = function  # keeps the library loaded while the kernel lives
        self.entry = ctypes.cast(function, ctypes.c_void_p).value
        self.num_args = num_args

    def __call__(self, *args: Any, device: int) -> None:
        if len(args) != self.num_args:
            raise TypeError(
                f"compiled openreg kernel takes {self.num_args} arguments, got {len(args)}")
        _C._launch_compiled_kernel(self.entry, device, *args)


def openreg_kernel(async_compile: Any, arg_types: list[str], source: str) -> Any:
    """Compiles ``source`` with Inductor's C++ code cache (possibly in a worker pool)."""
    from torch._inductor.codecache import CodeCacheFuture, LambdaFuture

    compiled = async_compile.cpp(source)
    if isinstance(compiled, CodeCacheFuture):
        return LambdaFuture(lambda: OpenRegKernel(compiled.result(), len(arg_types)))
    return OpenRegKernel(compiled, len(arg_types))
# LITERALINCLUDE END: COMPILE_RUNTIME_KERNEL


def get_raw_stream(device_index: int) -> int:
    """The driver handle (``orStream_t``) of the current stream of ``device_index``."""
    return _C._current_raw_stream(device_index)

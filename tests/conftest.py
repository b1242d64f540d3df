"""Shared helpers: the repository root, running Python snippets and examples in fresh processes."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(args: list[str], env: dict | None, timeout: int) -> subprocess.CompletedProcess:
    # Run once: an abort at exit is a failure (docs/lifecycle.md, "Exit").
    return subprocess.run(args, capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=timeout, cwd=ROOT)


def run_python(code: str, env: dict | None = None,
               timeout: int = 120) -> subprocess.CompletedProcess:
    """Runs `code` in a new interpreter (fresh device state, its own environment)."""
    return _run([sys.executable, "-c", code], env, timeout)


def run_example(name: str, env: dict | None = None, timeout: int = 300) -> str:
    """Runs examples/<name> as the guide does (a script, from the repository root); its stdout.

    Every example belongs to one chapter, and that chapter's tests/test_<chapter>.py runs it
    (tools/check_anchors.py checks that the file name appears there).
    """
    result = _run([sys.executable, str(ROOT / "examples" / name)], env, timeout)
    assert result.returncode == 0, f"{name} exited with {result.returncode}:\n{result.stderr}"
    return result.stdout


def cpp_program(target: str) -> Path:
    """Builds `target`, a C++ program that installing the package leaves out (the driver's
    GoogleTest binary, benchmarks/handoff.cpp), in the project's CMake tree; its path.

    The tree is the one setup.py configures (`build/cmake`), or $OPENREG_BUILD_DIR (the
    sanitizer builds of scripts/sanitize.sh); only what is out of date is compiled.
    """
    build = Path(os.environ.get("OPENREG_BUILD_DIR", ROOT / "build" / "cmake"))
    assert (build / "build.ninja").exists(), f"build the project first: {build} is not configured"
    result = subprocess.run(["cmake", "--build", str(build), "--target", target],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, (f"building {target} failed:\n{result.stdout[-4000:]}"
                                    f"{result.stderr[-2000:]}")
    return build / "bin" / target


@pytest.fixture
def python():
    return run_python


# ---- a gate on a stream, through the driver's C API (as another library would) ----
import ctypes  # noqa: E402
import threading  # noqa: E402
from contextlib import contextmanager  # noqa: E402

_HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def driver() -> ctypes.CDLL:
    """libopenreg, the same library the backend loaded."""
    import torch_openreg

    lib = ctypes.CDLL(str(Path(torch_openreg.__file__).parent / "lib" / "libopenreg.so"))
    lib.orLaunchHostFunc.argtypes = [ctypes.c_void_p, _HOST_FN, ctypes.c_void_p]
    lib.orStreamCreate.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.orStreamDestroy.argtypes = [ctypes.c_void_p]
    lib.orStreamSynchronize.argtypes = [ctypes.c_void_p]
    return lib


@contextmanager
def gate(stream):
    """Holds `stream` (a torch.Stream on openreg) until the with-block ends.

    Work queued on the stream inside the block waits behind the gate, which
    makes cross-stream ordering observable without relying on timing.
    """
    import torch

    opened = threading.Event()

    @_HOST_FN
    def wait(_):
        opened.wait(30)

    with torch.openreg.device(stream.device_index):
        rc = driver().orLaunchHostFunc(stream.native_handle or None, wait, None)
    assert rc == 0
    try:
        yield opened.set  # opening early is allowed, e.g. from another thread
    finally:
        opened.set()
        stream.synchronize()  # the queued call has returned: `wait` may now be released


# Shared by the kernel chapters' tests (hand-written and borrowed kernels).
import re  # noqa: E402

import torch  # noqa: E402


def rand(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype)
    return torch.randint(1, 9, shape, dtype=dtype)


def special(shape, dtype):
    """Random values with NaN, infinities and signed zeros among them."""
    x = torch.randn(shape).mul_(3)
    flat = x.view(-1)
    for i, v in enumerate([float("nan"), float("inf"), -float("inf"), 0.0, -0.0]):
        if i < flat.numel():
            flat[i * 7 % flat.numel()] = v
    return x.to(dtype)


def same_outcome(fn, *args):
    """fn on CPU tensors and on their openreg copies: the same values, dtype and strides, or the
    same error (raised by the call, or, if the CPU kernel raised it inside the device's kernel,
    by the next synchronization, as a GPU reports a kernel's failure)."""
    on_device = [a.to("openreg") for a in args]  # before fn, which may write to `args`
    try:
        expected = fn(*args)
    except RuntimeError as error:
        message = str(error).splitlines()[0]
        with pytest.raises(RuntimeError, match=re.escape(message[:40])):
            fn(*on_device)
            torch.openreg.synchronize()
        return
    got = fn(*on_device)
    torch.testing.assert_close(got.cpu(), expected, equal_nan=True)
    assert got.dtype == expected.dtype and got.stride() == expected.stride()

"""Checks torch_openreg makes before loading any C++ library (plain Python, no _C needed).

Both failures they catch would otherwise be hard to read: a second PrivateUse1 backend
aborts the process from a C++ static initializer, and a source folder without the compiled
extension fails with a circular-import message that points nowhere near the cause.
"""

import importlib.metadata
import importlib.util
from pathlib import Path

import torch


# LITERALINCLUDE START: AUTOLOAD_REFUSE_SECOND_BACKEND
def refuse_second_backend(name: str) -> None:
    """Raises if PrivateUse1 already belongs to another backend in this process.

    Only one library may register PrivateUse1's fallback: a second registration aborts
    the whole process from a static initializer, before Python could catch anything.
    """
    taken = torch._C._get_privateuse1_backend_name()
    if taken not in ("privateuseone", name):
        raise RuntimeError(
            f"torch_openreg cannot load: PrivateUse1 is already the '{taken}' backend in this "
            f"process, and '{name}' would be a second one (that aborts the process). Install one "
            "PrivateUse1 backend per environment, or disable autoloading with "
            "TORCH_DEVICE_BACKEND_AUTOLOAD=0 and import only one of them.")
    if taken == "privateuseone" and torch._C._dispatch_has_kernel_for_dispatch_key(
            "aten::empty.memory_format", "PrivateUse1"):
        raise RuntimeError(
            f"torch_openreg cannot load: an unnamed PrivateUse1 backend already registered "
            f"kernels in this process, and '{name}' would be a second one (that aborts the "
            "process). Install one PrivateUse1 backend per environment.")
# LITERALINCLUDE END: AUTOLOAD_REFUSE_SECOND_BACKEND


# LITERALINCLUDE START: AUTOLOAD_REFUSE_SOURCE_FOLDER
def refuse_source_folder(package: str, init_file: str) -> None:
    """Raises if `package` was imported from a folder that has no compiled `_C`.

    Typical cause: running Python from the source root after a non-editable install. The
    current directory comes first on sys.path, so the source folder shadows the
    installed package, and its `_C` was never built there.
    """
    if importlib.util.find_spec(f"{package}._C") is not None:
        return
    try:
        installed = importlib.metadata.distribution(package).locate_file(package)
        elsewhere = f" (the installed package is {installed})"
    except importlib.metadata.PackageNotFoundError:
        elsewhere = " (and no installed copy was found)"
    raise ImportError(
        f"{package} was imported from {Path(init_file).parent}, a source folder without the "
        f"compiled extension {package}._C{elsewhere}. Python puts the current directory first on "
        "sys.path, so running from the source root of a non-editable install imports the "
        "sources instead of the install: run from another directory, or install in develop "
        "mode (pip install --no-build-isolation -e .).")
# LITERALINCLUDE END: AUTOLOAD_REFUSE_SOURCE_FOLDER

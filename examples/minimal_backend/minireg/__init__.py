# LITERALINCLUDE START: MINIMAL_BACKEND_PACKAGE
"""minireg: the smallest PrivateUse1 backend that works (one device, host memory)."""


def _autoload() -> None:
    """The torch.backends entry point: importing the package did the work.

    Defined before `import torch`: `import minireg` imports torch, which autoloads
    this same, half-imported module and looks this function up.
    """


import ctypes  # noqa: E402
import importlib.util  # noqa: E402

import torch  # noqa: E402

# One PrivateUse1 backend per process: a second library registering its fallback
# would abort the process from a C++ static initializer, so refuse before loading.
_taken = torch._C._get_privateuse1_backend_name()
if _taken not in ("privateuseone", "minireg"):
    raise RuntimeError(f"minireg cannot load: PrivateUse1 is already the '{_taken}' backend "
                       "in this process (one PrivateUse1 backend per environment)")

# The library is not a Python extension: loading it runs its static initializers,
# which register the allocator, guard, hooks, kernels and fallback with PyTorch.
_lib = ctypes.CDLL(importlib.util.find_spec("minireg._C").origin)

from minireg import device  # noqa: E402

torch.utils.rename_privateuse1_backend("minireg")
torch._register_device_module("minireg", device)
# LITERALINCLUDE END: MINIMAL_BACKEND_PACKAGE

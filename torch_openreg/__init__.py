"""torch_openreg: PyTorch's PrivateUse1 backend, renamed ``openreg``, on an emulated accelerator.

Importing this package (which torch does by itself through the ``torch.backends``
entry point) loads the backend libraries, names the device ``openreg`` and
installs ``torch.openreg``.
"""

# LITERALINCLUDE START: AUTOLOAD_PACKAGE_INIT
def _autoload() -> None:
    """The ``torch.backends`` entry point: importing this package did all the work.

    Defined before ``import torch``: a program that imports torch_openreg first
    makes torch autoload this very module while it is still half imported.
    """


import torch  # noqa: E402

# Before any C++ library loads: refuse a second PrivateUse1 backend and a source
# folder without the compiled extension (torch_openreg/_preflight.py).
from torch_openreg import _preflight  # noqa: E402

_preflight.refuse_second_backend("openreg")
_preflight.refuse_source_folder(__name__, __file__)

# Loading _C loads libtorch_openreg, whose static initializers register the
# kernels, the allocator, the guard and the hooks with PyTorch.
from torch_openreg import _C  # noqa: E402,F401
from torch_openreg import openreg  # noqa: E402

torch.utils.rename_privateuse1_backend("openreg")
torch._register_device_module("openreg", openreg)
torch.utils.generate_methods_for_privateuse1_backend(
    for_tensor=True, for_module=True, for_storage=True
)
# LITERALINCLUDE END: AUTOLOAD_PACKAGE_INIT

# Operators with a CPU and a Meta kernel and no openreg kernel borrow the CPU's
# (csrc/aten/OpenRegBorrowed.cpp); done here, after every registration above.
_C._borrow_remaining_operators()

"""A workaround, for this guide's examples and tests only: torchvision imports when its compiled
operator library cannot load (PyPI's x86-64 torchvision wheel is built against CUDA's torch).

torchvision's import skips every registration for its compiled operators when that library did
not load, except the fake kernels of `torchvision::nms` and `torchvision::qnms`, which it
registers unconditionally: with no schema under those names, the import fails with "operator
torchvision::nms does not exist". transformers and timm import torchvision whenever it is
installed, so they fail with it. Declaring the two schemas first lets the import finish; every
compiled torchvision operator is still missing. A backend's own package never does this: it is
the installation that is wrong (docs/ecosystem.md).
"""

import ctypes
import importlib.machinery
import importlib.util
import sys
from pathlib import Path

import torch


def compiled_ops_error() -> str | None:
    """Why torchvision's compiled library does not load, or None if it loads (or torchvision is
    not installed). Loads it as torchvision does, with the dynamic loader's own message."""
    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.origin is None:
        return None
    package = Path(spec.origin).parent
    found = [package / f"_C{suffix}" for suffix in importlib.machinery.EXTENSION_SUFFIXES]
    library = next((path for path in found if path.is_file()), None)
    if library is None:
        return "torchvision has no compiled library (_C)"
    try:
        ctypes.CDLL(str(library))
    except OSError as error:
        return str(error)
    return None


# LITERALINCLUDE START: EXAMPLE_ECOSYSTEM_TORCHVISION_SCHEMAS
# The schemas torchvision's C++ library defines for the two operators (its ops/nms.cpp and
# ops/quantized/cpu/qnms_kernel.cpp).
SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)
_declared: torch.library.Library | None = None  # the schemas live as long as this object


def declare_torchvision_schemas() -> bool:
    """Declares the two schemas if torchvision's import needs them; True if they are declared.

    Call it before anything imports torchvision (transformers, timm). Where the compiled library
    loads, it declares nothing: torchvision defines the schemas itself, and a second definition
    would be an error.
    """
    global _declared
    if _declared is None and "torchvision" not in sys.modules and compiled_ops_error():
        _declared = torch.library.Library("torchvision", "FRAGMENT")
        for schema in SCHEMAS:
            _declared.define(schema)
    return _declared is not None
# LITERALINCLUDE END: EXAMPLE_ECOSYSTEM_TORCHVISION_SCHEMAS

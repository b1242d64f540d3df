"""The device module's lazy hooks for torch.compile: ``import torch`` loads no compiler."""

import importlib.abc
import importlib.machinery
import sys
from typing import Any

# LITERALINCLUDE START: COMPILE_LAZY_HOOKS
# Inductor's init_backend_registration looks these names up on torch.openreg.
_INDUCTOR_NAMES = ("Scheduling", "PythonWrapperCodegen", "CppWrapperCodegen")


def inductor_attribute(name: str) -> Any:
    """torch.openreg.<name> for Inductor's names: loads and registers the backend on first use."""
    if name not in _INDUCTOR_NAMES:
        raise AttributeError(f"module 'torch.openreg' has no attribute {name!r}")
    from torch_openreg._inductor import backend

    return getattr(backend, name)


class _DynamoImportHook(importlib.abc.MetaPathFinder):
    """Registers the Dynamo device interface right after Dynamo imports its registry."""

    _MODULE = "torch._dynamo.device_interface"

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self._MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            load(module)
            sys.modules[fullname] = module
            from torch_openreg._inductor.device_interface import register_device_interface

            register_device_interface()

        spec.loader.exec_module = exec_module
        return spec


def install_dynamo_hook() -> None:
    if _DynamoImportHook._MODULE in sys.modules:  # Dynamo came first: register now
        from torch_openreg._inductor.device_interface import register_device_interface

        register_device_interface()
    elif not any(isinstance(f, _DynamoImportHook) for f in sys.meta_path):
        sys.meta_path.insert(0, _DynamoImportHook())
# LITERALINCLUDE END: COMPILE_LAZY_HOOKS

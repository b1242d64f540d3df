"""torch.openreg's public API and its submodules', as text: one line per name, with its signature.

    python tools/api_snapshot.py            # prints the current surface
    python tools/api_snapshot.py --write    # rewrites tests/openreg_api.txt from it
    python tools/api_snapshot.py --check    # exits 1, with a diff, if that file is stale

tests/test_device.py compares the file with the package, so the surface a backend team copies
cannot change without the change showing in review. A module's public names are its ``__all__``
when it has one, else every name without a leading underscore that the module defines (not
the ones it imports). A class lists the public methods and properties it defines itself.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "tests" / "openreg_api.txt"
HEADER = "# torch.openreg's public API. Regenerate: python tools/api_snapshot.py --write\n"


def _signature(obj: object) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):  # a builtin without text signature
        return "(...)"


def _public_names(module) -> list[str]:
    if hasattr(module, "__all__"):
        return sorted(module.__all__)
    names = []
    for name, obj in vars(module).items():
        if name.startswith("_"):
            continue
        if inspect.ismodule(obj):
            continue  # submodules get their own section
        if getattr(obj, "__module__", module.__name__) == module.__name__:
            names.append(name)
    return sorted(names)


def _describe(name: str, obj: object) -> list[str]:
    if inspect.isclass(obj):
        lines = [f"class {name}{_signature(obj)}"]
        for member, value in sorted(vars(obj).items()):
            if member.startswith("_"):
                continue
            if isinstance(value, property):
                lines.append(f"    property {member}")
            elif isinstance(value, (staticmethod, classmethod)):
                lines.append(f"    {type(value).__name__} {member}{_signature(value.__func__)}")
            elif callable(value):
                lines.append(f"    def {member}{_signature(value)}")
            elif not dataclasses.is_dataclass(obj):  # a dataclass's fields are in its signature
                lines.append(f"    {member}: {type(value).__name__}")
        return lines
    if callable(obj) and not hasattr(obj, "__len__"):
        return [f"def {name}{_signature(obj)}"]
    return [f"{name}: {type(obj).__name__}"]


def modules() -> list:
    """torch.openreg (the package torch_openreg.openreg) and its public submodules, in order."""
    import torch_openreg.openreg as package

    found = [package]
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if any(part.startswith("_") for part in info.name.split(".")[2:]):
            continue
        found.append(importlib.import_module(info.name))
    return found


def render() -> str:
    """The snapshot's text for the package as imported now."""
    out = [HEADER]
    for module in modules():
        shown = module.__name__.replace("torch_openreg.openreg", "torch.openreg", 1)
        out.append(f"\n[{shown}]\n")
        for name in _public_names(module):
            out.extend(line + "\n" for line in _describe(name, getattr(module, name)))
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help=f"rewrite {SNAPSHOT.name}")
    group.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        SNAPSHOT.write_text(text)
        return 0
    if args.check:
        old = SNAPSHOT.read_text() if SNAPSHOT.exists() else ""
        if old == text:
            return 0
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                   str(SNAPSHOT.relative_to(ROOT)), "package"))
        return 1
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

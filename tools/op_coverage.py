"""Operator coverage of openreg, read from the dispatcher of the installed torch.

    python tools/op_coverage.py [--output FILE]    # Markdown; stdout by default

For every ATen operator the dispatcher knows, what an openreg tensor gets:

  openreg kernel     a kernel of the backend's own (hand-written)
  borrowed kernel    PyTorch's CPU kernel run on device memory (OpenRegBorrowed.cpp): every
                     operator with a CPU and a Meta kernel, and the data-dependent ones
  composite          inherited: a CompositeImplicitAutograd or CompositeExplicitAutograd
                     implementation built from other operators
  CPU fallback       no kernel: the global fallback runs it on CPU copies
  refused            no kernel, and the fallback refuses it (a view, a factory, random)
  unsupported        no kernel, and no CPU kernel for a fallback to run either

This answers, for torch as installed, the question a backend author asks first: which
operators must I implement, and which do I inherit?
"""

from __future__ import annotations

import argparse
import collections
import sys

import torch
import torch_openreg  # noqa: F401  (registers the backend)
from torch_openreg import _C

ORDER = ["openreg kernel", "borrowed kernel", "composite", "CPU fallback", "refused", "unsupported"]

# Operators registered on PrivateUse1 with the CPU fallback as their kernel
# (OVERRIDE_AND_PER_OP_FALLBACK in csrc/aten/OpenRegRegistrationPaths.cpp). The
# dispatcher shows them as kernels of ours; tests/test_coverage.py keeps this
# set equal to the registrations in the source.
PER_OPERATOR_FALLBACKS = {"aten::logaddexp"}


def _entry(table: str, key: str) -> str:
    for line in table.splitlines():
        if line.startswith(key + ":"):
            return line
    return ""


# LITERALINCLUDE START: OP_COVERAGE_CLASSIFY
def classify(qualified: str) -> tuple[str, str]:
    """(category, detail) of one operator, e.g. ("borrowed kernel", "") for aten::sin."""
    table = torch._C._dispatch_dump_table(qualified)
    entry = _entry(table, "PrivateUse1")
    if "[kernel]" in entry:
        if qualified in PER_OPERATOR_FALLBACKS:
            return "CPU fallback", "registered to fall back on purpose (see the operators chapter)"
        if "OpenRegBorrowed.cpp" in entry:
            if "[kernel]" not in _entry(table, "Meta"):
                return "borrowed kernel", "runs and waits: no Meta kernel, or shapes from the data"
            return "borrowed kernel", ""
        if "/torch_openreg/" in entry or "/csrc/aten/" in entry:
            return "openreg kernel", entry.rsplit("/", 1)[-1].split(":")[0]
        return "openreg kernel", "registered from Python"
    if "[math kernel]" in entry:
        return "composite", "implicit"
    if "[default backend kernel]" in entry:
        return "composite", "explicit"
    name, _, overload = qualified.partition(".")
    why = _C._why_no_fallback(name, overload)
    if why:
        return "refused", why
    cpu = _entry(table, "CPU")
    if not cpu or "[backend fallback]" in cpu:
        return "unsupported", "no CPU kernel to fall back to"
    return "CPU fallback", fallback_reason(qualified, table)


def fallback_reason(qualified: str, table: str) -> str:
    """Why an operator with a CPU kernel is not borrowed (borrowed kernels need a Meta kernel)."""
    meta = _entry(table, "Meta")
    # The same rule borrow_remaining_operators (csrc/aten/OpenRegBorrowed.cpp) skips by.
    if "[kernel]" in meta and "quantize" in qualified:
        return "returns a quantized tensor, which a borrowed kernel cannot make: not borrowed"
    if "[kernel]" in meta:
        return "has a Meta kernel, but the borrowed path does not take it"
    for word, layout in (("mkldnn", "MKL-DNN"), ("nested", "nested"), ("jagged", "nested")):
        if word in qualified:
            return f"no Meta kernel; works on {layout} tensors, which openreg does not have"
    for word, layout in (("sparse", "sparse"), ("spdiags", "sparse"), ("quantiz", "quantized")):
        if word in qualified:
            return (f"no Meta kernel; works on {layout} tensors, whose operators run on the CPU "
                    "on openreg")
    if "_test_" in qualified or "foobar" in qualified:
        return "no Meta kernel; an operator of PyTorch's own tests"
    return "no Meta kernel: the host cannot plan its outputs before a kernel runs"
# LITERALINCLUDE END: OP_COVERAGE_CLASSIFY


def coverage() -> dict[str, list[tuple[str, str]]]:
    result: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    for qualified in sorted(torch._C._dispatch_get_all_op_names()):
        if not qualified.startswith("aten::"):
            continue
        category, detail = classify(qualified)
        result[category].append((qualified, detail))
    return result


def markdown(result: dict[str, list[tuple[str, str]]]) -> str:
    total = sum(len(v) for v in result.values())
    out = [
        "# Operator coverage",
        "",
        "Generated while this site was built, from the dispatcher of torch "
        f"{torch.__version__} with",
        "torch_openreg loaded (`tools/op_coverage.py`). Each ATen operator (overloads count",
        "separately) is in one category; see [Operators](operators.md) for what they mean.",
        "",
        "| category | operators |",
        "| --- | --- |",
    ]
    out += [f"| {c} | {len(result.get(c, []))} |" for c in ORDER]
    out += [f"| **all** | **{total}** |", ""]
    for category in ORDER:
        ops = result.get(category, [])
        out += [f"## {category} ({len(ops)})", ""]
        if category == "composite":
            out += ["Inherited from PyTorch; listed by name only.", ""]
            out.append(", ".join(f"`{name}`" for name, _ in ops))
        elif category in ("refused", "unsupported", "openreg kernel", "CPU fallback"):
            out += ["| operator | note |", "| --- | --- |"]
            out += [f"| `{name}` | {detail} |" for name, detail in ops]
        else:
            out.append(", ".join(f"`{name}`" for name, _ in ops))
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", help="write the Markdown page here instead of stdout")
    args = parser.parse_args(argv)
    text = markdown(coverage())
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

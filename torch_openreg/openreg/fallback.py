"""Which operators ran on the CPU fallback, and how often."""

from torch_openreg import _C


# LITERALINCLUDE START: FALLBACK_PYTHON_REPORT
def fallback_counts() -> dict[str, int]:
    """How many times each operator fell back to the CPU since start (or the last reset)."""
    return dict(_C._fallback_counts())


def reset_fallback_counts() -> None:
    """Starts counting fallbacks afresh, e.g. before the part of a program to inspect."""
    _C._reset_fallback_counts()


def fallback_report() -> str:
    """A table of the operators that fell back, most frequent first."""
    counts = sorted(fallback_counts().items(), key=lambda item: (-item[1], item[0]))
    if not counts:
        return "no operator fell back to the CPU"
    width = max(len(name) for name, _ in counts)
    lines = [f"{'operator':<{width}}  calls", f"{'-' * width}  -----"]
    lines += [f"{name:<{width}}  {count:5d}" for name, count in counts]
    return "\n".join(lines)
# LITERALINCLUDE END: FALLBACK_PYTHON_REPORT

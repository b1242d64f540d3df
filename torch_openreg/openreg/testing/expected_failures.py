"""The reviewed tables of checks that fail on openreg, each with its reason.

``EXPECTED_FAILURES`` holds the OpInfo checks; ``MODULE_EXPECTED_FAILURES`` and
``OPTIMIZER_EXPECTED_FAILURES`` the ModuleInfo and OptimizerInfo checks, keyed
``(name, dtype, check)`` the same way.

Keys are ``(op, dtype, direction)``: ``op`` is the OpInfo name with its variant
(``"nn.functional.conv2d"``, ``"max.reduction_with_dim"``), ``dtype`` a dtype
name or ``"*"`` for all, ``direction`` ``"forward"`` or ``"backward"``. The
test module marks these ``expectedFailure`` (so a fix that makes one pass is
reported, and the entry must be removed); the sweep reports them as ``xfail``.
Nothing is skipped silently: an entry without a reason is refused.
"""

from __future__ import annotations

# LITERALINCLUDE START: TESTING_EXPECTED_FAILURES
_ADDR_ROUNDING = (
    "addr has no openreg kernel and decomposes into mul and add, rounding the outer product to "
    "the dtype before adding; the CPU kernel rounds once: results differ by a few ulps")
_LOWRANK_COMPLEX = (
    "an asynchronous kernel failure ('view_as_real doesn't work on unresolved conjugated "
    "tensors') appears when the CPU reference runs first in the same process; running the "
    "operator alone on openreg matches the CPU; cause not yet found")
_FACTORY = (
    "a factory: the CPU fallback refuses operators without a device operand, and openreg has no "
    "kernel for it yet (the fallback chapter uses it as its example of a refused factory)")
_ADDBMM_ONE_PRODUCT = (
    "addbmm is one product over all batches, accumulated in float32 as on CUDA; the CPU's "
    "kernel adds one batch at a time and rounds to the dtype after each: results differ in the "
    "last bits of float16/bfloat16")
_FLOAT16_IN_FLOAT32 = (
    "openreg computes float16 convolutions in float32 and rounds once (see the mixed-precision "
    "chapter, in_compute_type); the CPU's float16 kernel rounds along the way")
_COMPRESSED = ("takes a sparse CSR tensor, and the compressed sparse layouts are not implemented "
               "on openreg (COO is): moving the CSR operand raises NotImplementedError naming "
               "the constructor and the layout")

EXPECTED_FAILURES: dict[tuple[str, str, str], str] = {
    ("addr", "float16", "forward"): _ADDR_ROUNDING,
    ("addr", "bfloat16", "forward"): _ADDR_ROUNDING,
    ("addbmm", "float16", "forward"): _ADDBMM_ONE_PRODUCT,
    ("addbmm", "bfloat16", "forward"): _ADDBMM_ONE_PRODUCT,
    ("nn.functional.conv_transpose1d", "float16", "forward"): _FLOAT16_IN_FLOAT32,
    ("nn.functional.conv_transpose2d", "float16", "forward"): _FLOAT16_IN_FLOAT32,
    ("nn.functional.conv_transpose3d", "float16", "forward"): _FLOAT16_IN_FLOAT32,
    ("pca_lowrank", "complex64", "forward"): _LOWRANK_COMPLEX,
    ("svd_lowrank", "complex64", "forward"): _LOWRANK_COMPLEX,
    ("tril_indices", "*", "forward"): _FACTORY,
    ("triu_indices", "*", "forward"): _FACTORY,
    ("sparse.mm.reduce", "*", "forward"): _COMPRESSED,
    ("sparse.mm.reduce", "*", "backward"): _COMPRESSED,
    ("sparse.sampled_addmm", "*", "forward"): _COMPRESSED,
    ("sparse.sampled_addmm", "*", "backward"): _COMPRESSED,
}
# LITERALINCLUDE END: TESTING_EXPECTED_FAILURES


def expected_failure(op: str, dtype: str, direction: str) -> str | None:
    """The reason ``op`` is expected to fail for ``dtype`` and ``direction``, or None."""
    for key in ((op, dtype, direction), (op, "*", direction)):
        if key in EXPECTED_FAILURES:
            reason = EXPECTED_FAILURES[key]
            assert reason.strip(), f"expected failure {key} has no reason"
            return reason
    return None


# LITERALINCLUDE START: TESTING_SUITE_FAILURES
# (ModuleInfo name, dtype or "*", check of MODULE_CHECKS) -> reason
MODULE_EXPECTED_FAILURES: dict[tuple[str, str, str], str] = {}
# (OptimizerInfo name, dtype or "*", implementation of OPTIMIZER_IMPLS) -> reason
OPTIMIZER_EXPECTED_FAILURES: dict[tuple[str, str, str], str] = {}
# LITERALINCLUDE END: TESTING_SUITE_FAILURES


def suite_expected_failure(table: dict, name: str, dtype: str, check: str) -> str | None:
    """The reason a module or optimizer check is expected to fail, or None."""
    for key in ((name, dtype, check), (name, "*", check)):
        if key in table:
            assert table[key].strip(), f"expected failure {key} has no reason"
            return table[key]
    return None

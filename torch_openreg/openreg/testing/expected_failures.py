"""The one reviewed table of OpInfo checks that fail on openreg, each with its reason.

Keys are ``(op, dtype, direction)``: ``op`` is the OpInfo name with its variant
(``"nn.functional.conv2d"``, ``"max.reduction_with_dim"``), ``dtype`` a dtype
name or ``"*"`` for all, ``direction`` ``"forward"`` or ``"backward"``. The
test module marks these ``expectedFailure`` (so a fix that makes one pass is
reported, and the entry must be removed); the sweep reports them as ``xfail``.
Nothing is skipped silently: an entry without a reason is refused.
"""

from __future__ import annotations

# LITERALINCLUDE START: TESTING_EXPECTED_FAILURES
EXPECTED_FAILURES: dict[tuple[str, str, str], str] = {
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

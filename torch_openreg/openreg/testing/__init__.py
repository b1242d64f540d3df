"""Reusing PyTorch's OpInfo database to check the openreg backend against the CPU.

``compare`` runs one OpInfo's sample inputs on openreg and on the CPU and
compares the results; ``expected_failures.EXPECTED_FAILURES`` is the one reviewed
table of known mismatches. ``tests/test_testing.py`` instantiates PyTorch's
device-type tests with them and ``scripts/opinfo_sweep.py`` sweeps the whole
database. Importing this package imports ``torch.testing._internal``, which
needs ``expecttest`` and ``numpy``.
"""

from .compare import Outcome, check_module, check_op, is_random_op
from .expected_failures import EXPECTED_FAILURES, expected_failure

__all__ = ["EXPECTED_FAILURES", "Outcome", "check_module", "check_op", "expected_failure",
           "is_random_op"]

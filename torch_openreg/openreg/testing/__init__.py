"""Reusing PyTorch's OpInfo, ModuleInfo and OptimizerInfo databases: openreg against the CPU.

``compare`` runs one OpInfo's sample inputs on openreg and on the CPU and
compares the results; ``modules`` does the same for a ModuleInfo, one check at a
time, and ``optimizers`` for an OptimizerInfo's configs; ``expected_failures``
holds the reviewed tables of known mismatches. ``tests/test_testing.py``
instantiates PyTorch's device-type tests with them and ``scripts/opinfo_sweep.py``
sweeps the whole OpInfo database. Importing this package imports
``torch.testing._internal``, which needs ``expecttest`` and ``numpy``.
"""

from .compare import Outcome, check_op, is_random_op
from .expected_failures import EXPECTED_FAILURES, expected_failure
from .modules import MODULE_CHECKS, check_module
from .optimizers import OPTIMIZER_IMPLS, check_optimizer

__all__ = ["EXPECTED_FAILURES", "MODULE_CHECKS", "OPTIMIZER_IMPLS", "Outcome", "check_module",
           "check_op", "check_optimizer", "expected_failure", "is_random_op"]

"""PyTorch's device-type test machinery, instantiated for openreg with the OpInfo harness.

``instantiate(globals())`` in a test module creates ``TestOpInfoOpenRegPRIVATEUSE1``
and ``TestModuleInfoOpenRegOPENREG``: one test per operator (or module) and
dtype, comparing openreg with the CPU. Import this after the backend: PyTorch
decides which device test bases exist when ``common_device_type`` is imported.
"""

from __future__ import annotations

import unittest
from collections.abc import Collection

import torch
import torch_openreg  # noqa: F401  (first: PrivateUse1TestBase needs an available device)
from torch.testing._internal.common_device_type import (
    OpDTypes,
    instantiate_device_type_tests,
    ops,
)
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_modules import module_db, modules
from torch.testing._internal.common_utils import TestCase

from .compare import check_module, check_op, dtype_name, op_key
from .expected_failures import expected_failure

# LITERALINCLUDE START: TESTING_FAST_SUBSET
# The CI subset: one or more entries per mechanism that has broken before
# (copies with conjugate/negative bits, FFTs, batch norm, random operators,
# recurrent networks, reductions, indexing, matrix products).
FAST_OPS = {
    "conj", "resolve_conj", "resolve_neg", "clone",
    "fft.fft", "fft.ifft", "fft.hfft", "fft.ihfft", "fft.hfft2",
    "nn.functional.batch_norm", "nn.functional.layer_norm",
    "normal", "bernoulli", "multinomial", "exponential", "nn.functional.dropout",
    "nn.functional.rrelu",
    "sum", "mean", "amax", "std", "cumsum",
    "index_select", "index_put", "gather", "scatter_add", "masked_select", "nonzero",
    "matmul",
    "neg", "sigmoid", "maximum", "addcmul", "cat", "stack", "to",
    "nn.functional.max_unpool2d", "linalg.lu_solve",
}
FAST_MODULES = {"nn.LSTM", "nn.GRU", "nn.RNN", "nn.LSTMCell", "nn.GRUCell", "nn.BatchNorm2d"}
# LITERALINCLUDE END: TESTING_FAST_SUBSET
FORWARD_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64,
                  torch.int64, torch.bool)
BACKWARD_DTYPES = (torch.float32, torch.float64)


# LITERALINCLUDE START: TESTING_DEVICE_CLASSES
def instantiate(scope: dict, op_names: Collection[str] | None = None,
                module_names: Collection[str] | None = None, max_samples: int = 4) -> None:
    """Adds the openreg OpInfo and ModuleInfo test classes to ``scope``.

    ``op_names``/``module_names`` select entries of PyTorch's databases (None:
    all of them); ``max_samples`` bounds the samples per operator and dtype.
    """
    selected = [op for op in op_db if op_names is None or op.name in op_names]
    selected_modules = [m for m in module_db if module_names is None or m.name in module_names]

    class TestOpInfoOpenReg(TestCase):
        """Every sample of every selected OpInfo: openreg against the CPU."""

        def _check(self, op, dtype, direction, device):
            outcome = check_op(op, dtype, backward=direction == "backward", device=device,
                               max_samples=max_samples)
            if outcome.status == "skip":
                raise unittest.SkipTest(outcome.detail)
            reason = expected_failure(op_key(op), dtype_name(dtype), direction)
            if reason is not None:  # an expected failure must still fail, or leave the table
                self.assertNotEqual(outcome.status, "pass",
                                    f"now passes: remove it from EXPECTED_FAILURES ({reason})")
                return
            self.assertEqual(outcome.status, "pass", outcome.detail)

        @ops(selected, allowed_dtypes=FORWARD_DTYPES)
        def test_forward(self, device, dtype, op):
            self._check(op, dtype, "forward", device)

        @ops([op for op in selected if op.supports_autograd], dtypes=OpDTypes.supported_backward,
             allowed_dtypes=BACKWARD_DTYPES)
        def test_backward(self, device, dtype, op):
            self._check(op, dtype, "backward", device)

    class TestModuleInfoOpenReg(TestCase):
        """PyTorch's ModuleInfo samples (LSTM, GRU, RNN, ...): outputs and gradients."""

        @modules(selected_modules, allowed_dtypes=(torch.float32,))
        def test_module(self, device, dtype, module_info, training):
            outcome = check_module(module_info, dtype, training=training, device=device,
                                   max_samples=max_samples)
            self.assertEqual(outcome.status, "pass", outcome.detail)

    for generic in (TestOpInfoOpenReg, TestModuleInfoOpenReg):
        generic.__module__ = scope.get("__name__", generic.__module__)
        scope[generic.__name__] = generic
        instantiate_device_type_tests(generic, scope, only_for="openreg")
# LITERALINCLUDE END: TESTING_DEVICE_CLASSES

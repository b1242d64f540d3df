"""PyTorch's device-type test machinery, instantiated for openreg with the harness.

``instantiate(globals())`` in a test module creates ``TestOpInfoOpenRegPRIVATEUSE1``,
``TestModuleInfoOpenRegOPENREG`` and ``TestOptimizerInfoOpenRegOPENREG``: one test per
operator and dtype and direction, per module and dtype and check, per optimizer and dtype
and implementation, comparing openreg with the CPU. Import this after the backend: PyTorch
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
from torch.testing._internal.common_optimizers import optim_db, optims
from torch.testing._internal.common_utils import TestCase

from .compare import Outcome, check_op, dtype_name, op_key
from .expected_failures import (
    MODULE_EXPECTED_FAILURES,
    OPTIMIZER_EXPECTED_FAILURES,
    expected_failure,
    suite_expected_failure,
)
from .modules import check_module
from .optimizers import check_optimizer

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
# Modules: recurrent networks and batch norm (kernels of their own), a linear layer, a
# convolution (channels-last memory formats), an attention layer, an embedding (integer
# inputs) and a loss. Optimizers: all of them (a few steps each are quick).
FAST_MODULES = {"nn.LSTM", "nn.GRU", "nn.RNN", "nn.LSTMCell", "nn.GRUCell", "nn.BatchNorm2d",
                "nn.Linear", "nn.Conv2d", "nn.TransformerEncoderLayer", "nn.Embedding",
                "nn.CrossEntropyLoss"}
FAST_OPTIMIZERS = None
# LITERALINCLUDE END: TESTING_FAST_SUBSET
FORWARD_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64,
                  torch.int64, torch.bool)
BACKWARD_DTYPES = (torch.float32, torch.float64)


def _expect(test: TestCase, outcome: Outcome, reason: str | None) -> None:
    """Passes, skips, or (for an entry of an expected-failure table) must still fail."""
    if outcome.status == "skip":
        raise unittest.SkipTest(outcome.detail)
    if reason is not None:  # an expected failure must still fail, or leave the table
        test.assertNotEqual(outcome.status, "pass",
                            f"now passes: remove it from the expected failures ({reason})")
        return
    test.assertEqual(outcome.status, "pass", outcome.detail)


# LITERALINCLUDE START: TESTING_DEVICE_CLASSES
def instantiate(scope: dict, op_names: Collection[str] | None = None,
                module_names: Collection[str] | None = None,
                optim_names: Collection[str] | None = None, max_samples: int | None = 4,
                suite_dtypes: Collection[torch.dtype] = (torch.float32,)) -> None:
    """Adds the openreg OpInfo, ModuleInfo and OptimizerInfo test classes to ``scope``.

    ``op_names``/``module_names``/``optim_names`` select entries of PyTorch's databases
    (None: all of them); ``max_samples`` bounds the samples per operator (or module) and
    dtype; ``suite_dtypes`` are the dtypes of the module and optimizer tests.
    """
    selected = [op for op in op_db if op_names is None or op.name in op_names]
    selected_modules = [m for m in module_db if module_names is None or m.name in module_names]
    selected_optims = [o for o in optim_db if optim_names is None or o.name in optim_names]

    class TestOpInfoOpenReg(TestCase):
        """Every sample of every selected OpInfo: openreg against the CPU."""

        def _check(self, op, dtype, direction, device):
            outcome = check_op(op, dtype, backward=direction == "backward", device=device,
                               max_samples=max_samples)
            _expect(self, outcome, expected_failure(op_key(op), dtype_name(dtype), direction))

        @ops(selected, allowed_dtypes=FORWARD_DTYPES)
        def test_forward(self, device, dtype, op):
            self._check(op, dtype, "forward", device)

        @ops([op for op in selected if op.supports_autograd], dtypes=OpDTypes.supported_backward,
             allowed_dtypes=BACKWARD_DTYPES)
        def test_backward(self, device, dtype, op):
            self._check(op, dtype, "backward", device)

    class TestModuleInfoOpenReg(TestCase):
        """PyTorch's ModuleInfo samples: one test per module, dtype, mode and check."""

        def _check(self, module_info, dtype, training, check, device):
            outcome = check_module(module_info, dtype, check, training=training, device=device,
                                   max_samples=max_samples)
            _expect(self, outcome, suite_expected_failure(
                MODULE_EXPECTED_FAILURES, module_info.name, dtype_name(dtype), check))

        each_module = modules(selected_modules, allowed_dtypes=suite_dtypes)

        @each_module
        def test_forward(self, device, dtype, module_info, training):
            self._check(module_info, dtype, training, "forward", device)

        @each_module
        def test_backward(self, device, dtype, module_info, training):
            self._check(module_info, dtype, training, "backward", device)

        @each_module
        def test_gradgrad(self, device, dtype, module_info, training):
            self._check(module_info, dtype, training, "gradgrad", device)

        @each_module
        def test_memory_format(self, device, dtype, module_info, training):
            self._check(module_info, dtype, training, "memory_format", device)

        @each_module
        def test_to(self, device, dtype, module_info, training):
            self._check(module_info, dtype, training, "to", device)

        @each_module
        def test_to_identity(self, device, dtype, module_info, training):
            self._check(module_info, dtype, training, "to_identity", device)

        @each_module
        def test_state_dict(self, device, dtype, module_info, training):
            self._check(module_info, dtype, training, "state_dict", device)

    class TestOptimizerInfoOpenReg(TestCase):
        """PyTorch's OptimizerInfo configs: one test per optimizer, dtype and implementation."""

        def _check(self, optim_info, dtype, impl, device):
            outcome = check_optimizer(optim_info, dtype, impl, device=device)
            _expect(self, outcome, suite_expected_failure(
                OPTIMIZER_EXPECTED_FAILURES, optim_info.name, dtype_name(dtype), impl))

        each_optimizer = optims(selected_optims, dtypes=list(suite_dtypes))

        @each_optimizer
        def test_forloop(self, device, dtype, optim_info):
            self._check(optim_info, dtype, "forloop", device)

        @each_optimizer
        def test_foreach(self, device, dtype, optim_info):
            self._check(optim_info, dtype, "foreach", device)

        @each_optimizer
        def test_fused(self, device, dtype, optim_info):
            self._check(optim_info, dtype, "fused", device)

    for generic in (TestOpInfoOpenReg, TestModuleInfoOpenReg, TestOptimizerInfoOpenReg):
        generic.__module__ = scope.get("__name__", generic.__module__)
        scope[generic.__name__] = generic
        instantiate_device_type_tests(generic, scope, only_for="openreg")
# LITERALINCLUDE END: TESTING_DEVICE_CLASSES

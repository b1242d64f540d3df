"""A device-generic test file in PyTorch's style, for tests/test_testing.py to run through
tools/pytorch_tests.py: one test of each outcome the runner must tell apart. Its name does not
start with test_, so pytest does not collect it by itself."""

import os
import time

import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests, onlyCPU
from torch.testing._internal.common_utils import TestCase


class TestSample(TestCase):
    def test_add(self, device):
        x = torch.arange(4.0, device=device)
        self.assertEqual((x + x).cpu(), torch.arange(0.0, 8.0, 2.0))

    def test_listed_but_passes(self, device):
        self.assertEqual(torch.ones(2, device=device).sum().item(), 2.0)

    def test_mismatch(self, device):
        off = 0.0 if device == "cpu" else 1.0
        self.assertEqual(torch.zeros(3, device=device) + off, torch.zeros(3, device=device))

    def test_not_implemented(self, device):
        if device != "cpu":
            raise NotImplementedError("no kernel for this sample on openreg")

    def test_crash(self, device):
        if device != "cpu":
            os.abort()

    def test_hang(self, device):
        if device != "cpu":
            time.sleep(60)

    @onlyCPU
    def test_only_cpu(self, device):
        self.assertEqual(torch.ones(1).item(), 1.0)

    def test_zz_after_the_crash(self, device):
        self.assertTrue(torch.ones(1, device=device).bool().all().item())


instantiate_device_type_tests(TestSample, globals())

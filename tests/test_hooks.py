"""Hooks (docs/hooks.md): what each PrivateUse1HooksInterface method gives a user, through the API
that reaches it. Other chapters' tests cover the same hooks through their own features."""

import torch

from conftest import run_example, run_python


def test_hooks_example():
    out = run_example("hooks.py")
    assert "accelerator: openreg | available: True" in out
    assert "initialized at import: False" in out and "initialized after a tensor: True" in out
    assert "devices: 2" in out and "current device: 1 | was: 0" in out
    assert "explicit generator on openreg:1 | default draws the same numbers: True" in out
    assert "pageable pinned: False | after pin_memory(): True" in out
    assert "storage bytes: 64 | first values kept: [0.0, 1.0, 2.0, 3.0]" in out


def test_device_hooks_validate_the_index():
    for call in (torch._C._accelerator_hooks_set_current_device,
                 torch._C._accelerator_hooks_exchange_device):
        try:
            call(7)
        except RuntimeError as e:
            assert "Invalid openreg device index 7" in str(e)
        else:
            raise AssertionError("a missing device must be refused")
    assert torch._C._accelerator_hooks_get_current_device() == torch.openreg.current_device()


def test_new_generators_are_independent_of_the_default():
    torch.openreg.manual_seed(3)
    expected = torch.randn(4, device="openreg").cpu()
    torch.openreg.manual_seed(3)
    g = torch.Generator(device="openreg").manual_seed(5)
    torch.randn(4, device="openreg", generator=g)  # draws from g, not from the default
    assert torch.equal(torch.randn(4, device="openreg").cpu(), expected)


def test_pinned_is_answered_by_the_hooks_in_a_fresh_process():
    """pin_memory() and is_pinned() with no device argument reach openreg's hooks as the
    current accelerator's, before any openreg tensor exists."""
    code = ("import torch\n"
            "x = torch.ones(4).pin_memory()\n"
            "print(x.is_pinned(), torch.ones(4).is_pinned())\n")
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "False"]

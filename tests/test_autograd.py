"""Gradients on openreg: gradcheck in float64, and agreement with the CPU's gradients."""

import threading

import pytest
import torch

from conftest import run_example

F = torch.nn.functional


def on(device, *tensors):
    return [t.detach().to(device).requires_grad_() for t in tensors]


CASES = {
    "mm + tanh": (lambda a, b: torch.tanh(a @ b), [(3, 4), (4, 2)]),
    "softmax": (lambda a: torch.softmax(a, dim=1), [(3, 5)]),
    "log_softmax + nll": (
        lambda a: F.nll_loss(F.log_softmax(a, 1), torch.tensor([1, 0, 3], device=a.device)),
        [(3, 5)]),
    "layer_norm": (lambda a, w: F.layer_norm(a, (4,), w), [(2, 4), (4,)]),
    "conv2d": (lambda x, w: F.conv2d(x, w, padding=1), [(1, 2, 5, 5), (3, 2, 3, 3)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), [(1, 1, 4, 4)]),
    "gelu + sum": (lambda a: F.gelu(a).sum(dim=0), [(3, 4)]),
    "index + gather": (
        lambda a: a[torch.tensor([2, 0], device=a.device)].gather(
            1, torch.tensor([[1], [0]], device=a.device)),
        [(3, 3)]),
    "cat + mse": (
        lambda a, b: F.mse_loss(torch.cat([a, b]), torch.zeros(4, 2, device=a.device)),
        [(2, 2), (2, 2)]),
    "selu (overridden)": (torch.selu, [(6,)]),
}


@pytest.mark.parametrize("name", CASES)
def test_gradcheck_on_device(name):
    fn, shapes = CASES[name]
    torch.manual_seed(0)
    inputs = on("openreg", *[torch.randn(s, dtype=torch.float64) for s in shapes])
    assert torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("name", CASES)
def test_gradients_match_the_cpu(name):
    fn, shapes = CASES[name]
    torch.manual_seed(0)
    base = [torch.randn(s, dtype=torch.float64) for s in shapes]
    cpu_in, dev_in = on("cpu", *base), on("openreg", *base)
    fn(*cpu_in).sum().backward()
    fn(*dev_in).sum().backward()
    for c, d in zip(cpu_in, dev_in):
        torch.testing.assert_close(d.grad.cpu(), c.grad)


def test_backward_kernels_run_on_the_device():
    torch.openreg.reset_fallback_counts()
    x = torch.randn(4, 8, device="openreg", requires_grad=True)
    (F.gelu(x).tanh() * torch.sigmoid(x)).relu().sum().backward()
    assert torch.openreg.fallback_counts() == {}
    for op in ("aten::gelu_backward", "aten::tanh_backward", "aten::threshold_backward"):
        assert torch._C._dispatch_has_kernel_for_dispatch_key(op, "PrivateUse1")


def test_backward_runs_on_autograds_device_thread_unless_told_otherwise():
    # The chapter's "Where a backward pass runs": a hook on an openreg leaf runs on the thread
    # that computes the pass; the gradients are the same either way.
    x = torch.randn(1, 2, 6, 6, device="openreg", requires_grad=True)
    w = torch.randn(3, 2, 3, 3, device="openreg", requires_grad=True)
    threads = []
    x.register_hook(lambda g: threads.append(threading.get_native_id()))
    y = F.conv2d(x, w, padding=1)
    default = torch.autograd.grad(y.sum(), (x, w), retain_graph=True)
    with torch.autograd.set_multithreading_enabled(False):
        on_caller = torch.autograd.grad(y.sum(), (x, w))
    assert threads[0] != threading.get_native_id()  # autograd's thread for openreg:0
    assert threads[1] == threading.get_native_id()  # the calling thread
    for a, b in zip(default, on_caller):
        assert torch.equal(a.cpu(), b.cpu())


def test_autograd_example():
    out = run_example("autograd.py")
    assert "SeluFunction" in out and "gradcheck selu: True" in out
    assert "loss matches the CPU: True" in out and "fallbacks during backward: {}" in out

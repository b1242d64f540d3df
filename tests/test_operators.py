"""Every registration path, on openreg: stub, custom operators, fragments, autograd Functions,
a composite override, a per-operator fallback, and kernels registered from Python."""

import pytest
import torch

from conftest import run_example


def registered_from(op: str) -> str:
    line = [entry for entry in torch._C._dispatch_dump_table(op).splitlines()
            if entry.startswith("PrivateUse1:")][0]
    return line.rsplit("/", 1)[-1]


def test_stub_path_serves_abs_in_every_form():
    assert registered_from("aten::abs.out").startswith("OpenRegRegistrationPaths.cpp")
    x = torch.tensor([[-1.5, 2.0], [0.0, -3.0]])
    assert torch.equal(torch.abs(x.to("openreg")).cpu(), x.abs())
    d = x.to("openreg")
    d.abs_()
    assert torch.equal(d.cpu(), x.abs())
    c = torch.tensor([3 + 4j, -1j], dtype=torch.complex64)
    got = torch.abs(c.to("openreg"))
    assert got.dtype == torch.float32 and torch.equal(got.cpu(), torch.tensor([5.0, 1.0]))
    out = torch.empty(0, device="openreg")
    torch.abs(x.to("openreg").t(), out=out)
    assert torch.equal(out.cpu(), x.t().abs())


def test_custom_operator_kernels():
    x = torch.tensor([-2.0, 3.0, -0.5], dtype=torch.float64, device="openreg", requires_grad=True)
    y = torch.ops.openreg.custom_abs(x)
    assert y.device.type == "openreg" and torch.equal(y.detach().cpu(), x.detach().cpu().abs())
    y.sum().backward()
    assert torch.equal(x.grad.cpu(), torch.tensor([-1.0, 1.0, -1.0], dtype=torch.float64))
    meta = torch.ops.openreg.custom_abs(torch.empty(2, 5, device="meta"))
    assert meta.device.type == "meta" and meta.shape == (2, 5)
    assert torch.autograd.gradcheck(torch.ops.openreg.custom_abs, (x.detach().requires_grad_(),))


def test_fragment_extends_the_namespace():
    a = torch.ones(3, device="openreg", requires_grad=True)
    b = torch.ops.openreg.custom_add(a, a)
    assert torch.equal(b.detach().cpu(), torch.full((3,), 2.0))
    b.sum().backward()
    assert torch.equal(a.grad.cpu(), torch.full((3,), 2.0))
    assert torch.equal(torch.ops.openreg.custom_add(torch.ones(2), torch.ones(2)),
                       torch.full((2,), 2.0))


def test_autograd_function_returning_an_alias():
    x = torch.arange(6.0, device="openreg").reshape(2, 3).requires_grad_()
    v = torch.ops.openreg.custom_autograd_fn_aliasing(x)
    assert v._is_view() and v.shape == (6,)
    assert v.data_ptr() == x.data_ptr()
    (v * torch.arange(6.0, device="openreg")).sum().backward()
    assert torch.equal(x.grad.cpu(), torch.arange(6.0).reshape(2, 3))


def test_selu_autograd_override():
    x = torch.randn(8, dtype=torch.float64, device="openreg", requires_grad=True)
    y = torch.selu(x)
    assert "SeluFunction" in y.grad_fn.name()
    assert torch.autograd.gradcheck(torch.selu, (x,))
    xc = x.detach().cpu().requires_grad_()
    torch.selu(xc).sum().backward()
    y.sum().backward()
    torch.testing.assert_close(x.grad.cpu(), xc.grad)


def test_clone_override_keeps_layout_and_autograd():
    assert registered_from("aten::clone").startswith("OpenRegRegistrationPaths.cpp")
    x = torch.randn(4, 6, device="openreg").t().requires_grad_()
    c = x.clone()
    assert c.stride() == x.stride() and torch.equal(c.detach().cpu(), x.detach().cpu())
    contiguous = x.clone(memory_format=torch.contiguous_format)
    assert contiguous.is_contiguous() and torch.equal(contiguous.detach().cpu(), x.detach().cpu())
    (c * 2).sum().backward()
    assert torch.equal(x.grad.cpu(), torch.full((6, 4), 2.0))


def test_per_operator_fallback_is_counted():
    torch.openreg.reset_fallback_counts()
    a, b = torch.tensor([0.5, 1.0]), torch.tensor([2.0, -1.0])
    got = torch.logaddexp(a.to("openreg"), b.to("openreg"))
    torch.testing.assert_close(got.cpu(), torch.logaddexp(a, b))
    assert torch.openreg.fallback_counts() == {"aten::logaddexp": 1}


def test_operators_example():
    out = run_example("operators.py")
    assert "| fallbacks: {}" in out and "gradcheck: True" in out


@pytest.mark.parametrize("op", ["aten::add.Tensor", "aten::sin", "aten::convolution_overrideable"])
def test_native_kernels_are_registered(op):
    assert torch._C._dispatch_has_kernel_for_dispatch_key(op, "PrivateUse1")


def test_operators_stubs_example():
    out = run_example("operators_stubs.py")
    assert "dispatch stubs in torch 2.13.0" in out and "abs_stub is among them: True" in out

"""Registering openreg kernels from Python with torch.library."""

import torch

# LITERALINCLUDE START: EXAMPLE_PYTHON_IMPL
# A kernel for an existing operator, written in Python from operators the
# device already has: erfc(x) = 1 - erf(x). On openreg it replaces erfc's composite
# implementation, which calls erfc.out, a kernel borrowed from the CPU.
aten_openreg = torch.library.Library("aten", "IMPL")


def erfc_openreg(x: torch.Tensor) -> torch.Tensor:
    return 1 - torch.erf(x)


aten_openreg.impl("erfc", erfc_openreg, "PrivateUse1")
# LITERALINCLUDE END: EXAMPLE_PYTHON_IMPL


# LITERALINCLUDE START: EXAMPLE_PYTHON_CUSTOM_OP
# A new operator with an openreg implementation, a fake (meta) one, and autograd.
@torch.library.custom_op("openreg_examples::scaled_tanh", mutates_args=(), device_types="openreg")
def scaled_tanh(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.tanh(x) * scale


@scaled_tanh.register_fake
def _(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.empty_like(x)


def _setup_context(ctx, inputs, output):
    ctx.save_for_backward(output)
    ctx.scale = inputs[1]


def _backward(ctx, grad):
    (out,) = ctx.saved_tensors
    return grad * (ctx.scale - out * out / ctx.scale), None  # d/dx s*tanh(x) = s*(1 - tanh^2)


scaled_tanh.register_autograd(_backward, setup_context=_setup_context)
# LITERALINCLUDE END: EXAMPLE_PYTHON_CUSTOM_OP

if __name__ == "__main__":
    torch.openreg.reset_fallback_counts()
    x = torch.tensor([-1.0, 0.0, 2.0], device="openreg", dtype=torch.float64, requires_grad=True)
    print("erfc:", torch.erfc(x).detach().cpu(), "| fallbacks:", torch.openreg.fallback_counts())
    y = scaled_tanh(x, 3.0)
    y.sum().backward()
    print("scaled_tanh:", y.detach().cpu(), "grad:", x.grad.cpu())
    print("gradcheck:", torch.autograd.gradcheck(lambda t: scaled_tanh(t, 3.0),
                                                 (x.detach().requires_grad_(),)))

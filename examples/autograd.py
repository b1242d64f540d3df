"""Autograd on openreg: gradients come from device kernels, and a backend may supply its own."""

import torch

# LITERALINCLUDE START: EXAMPLE_AUTOGRAD
x = torch.randn(5, dtype=torch.float64, device="openreg", requires_grad=True)

y = torch.selu(x)  # openreg overrides selu's autograd with its own Function
print("grad_fn:", y.grad_fn.name())
print("gradcheck selu:", torch.autograd.gradcheck(torch.selu, (x,)))

w = torch.randn(5, 3, dtype=torch.float64, device="openreg", requires_grad=True)
loss = torch.nn.functional.gelu(x @ w).sum()
loss.backward()  # gelu_backward and mm run on the device
reference = torch.nn.functional.gelu(x.detach().cpu() @ w.detach().cpu().requires_grad_()).sum()
print("loss matches the CPU:", torch.allclose(loss.detach().cpu(), reference))
print("fallbacks during backward:", torch.openreg.fallback_counts())
# LITERALINCLUDE END: EXAMPLE_AUTOGRAD

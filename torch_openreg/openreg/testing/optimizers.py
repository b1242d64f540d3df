"""Runs an OptimizerInfo's configs on openreg and on the CPU: a few steps, then params and state."""

from __future__ import annotations

import copy

import torch

from .compare import BACKWARD_TOL, Mismatch, Outcome, compare_results, cpu_threads_of_kernels

# The implementations a config runs with: the per-parameter loop, the multi-tensor
# (foreach) kernels and the fused kernels. torch.optim allows foreach and fused on
# the PrivateUse1 backend (torch.utils._foreach_utils lists its name for both).
OPTIMIZER_IMPLS = ("forloop", "foreach", "fused")
# Optimizers whose parameters must be matrices (Muon orthogonalizes each update).
MATRIX_PARAMS_ONLY = {"Muon"}
# LBFGS iterates to convergence inside one step: its curvature history then holds ratios of
# differences at the rounding level, which differ between any two correct implementations
# (the per-step losses and the parameters are compared, not the history).
STATE_IS_ROUNDING_NOISE = {"LBFGS"}
STEPS = 3


def optimizer_configs(optim_info, dtype: torch.dtype) -> list:
    """The OptimizerInfo's configs for a CUDA-like device.

    PyTorch's config functions add capturable and tensor learning-rate configs only for
    ``cuda`` and ``xpu``, though torch.optim supports capturable on the PrivateUse1
    backend too: openreg gets those as well.
    """
    configs = list(optim_info.optim_inputs_func("openreg", dtype))
    seen = {c.desc for c in configs}
    return configs + [c for c in optim_info.optim_inputs_func("cuda", dtype)
                      if c.desc not in seen]


def _impl_kwargs(optim_info, impl: str) -> dict | None:
    """The flags selecting ``impl``, or None when the optimizer has no such implementation."""
    if impl == "forloop":
        return {"foreach": False} if "foreach" in optim_info.supported_impls else {}
    if impl not in optim_info.supported_impls:
        return None
    return {"foreach": True} if impl == "foreach" else {"fused": True, "foreach": False}


def _problem(optim_info, dtype: torch.dtype):
    """Parameters and a quadratic loss on them, made on the CPU from a fixed seed."""
    gen = torch.Generator().manual_seed(0)
    shapes = [(4, 3), (3, 5)]
    if optim_info.name not in MATRIX_PARAMS_ONLY:
        shapes += [(5,), (2, 3, 2)]
    params = [torch.randn(s, generator=gen, dtype=dtype) for s in shapes]
    targets = [torch.randn(s, generator=gen, dtype=dtype) for s in shapes]
    weights = [torch.rand(s, generator=gen, dtype=dtype) + 0.5 for s in shapes]
    return params, targets, weights


# LITERALINCLUDE START: TESTING_OPTIMIZER_STEPS
def _run(optim_info, kwargs: dict, device: str, dtype: torch.dtype):
    """``STEPS`` optimizer steps on the same problem on ``device``: params, state, losses.

    Every step takes a closure (LBFGS needs one; the others call it once), which computes a
    weighted quadratic loss and its gradients: sparse ones for an optimizer that only takes
    sparse gradients.
    """
    params, targets, weights = _problem(optim_info, dtype)
    params = [torch.nn.Parameter(p.to(device)) for p in params]
    targets = [t.to(device) for t in targets]
    weights = [w.to(device) for w in weights]
    optimizer = optim_info.optim_cls(params, **copy.deepcopy(kwargs))
    sparse = optim_info.only_supports_sparse_grads

    def closure():
        optimizer.zero_grad()
        loss = sum(((p - t) * w).square().sum() for p, t, w in zip(params, targets, weights))
        loss.backward()
        if sparse:
            for p in params:
                p.grad = p.grad.to_sparse()
        return loss

    losses = [float(optimizer.step(closure)) for _ in range(STEPS)]
    return params, optimizer.state_dict()["state"], losses
# LITERALINCLUDE END: TESTING_OPTIMIZER_STEPS


# LITERALINCLUDE START: TESTING_OPTIMIZER_CHECK
def check_optimizer(optim_info, dtype: torch.dtype, impl: str = "forloop",
                    device: str = "openreg") -> Outcome:
    """Every config of ``optim_info`` with ``impl`` (``OPTIMIZER_IMPLS``), openreg against the CPU.

    The CPU runs the same config with the same flags (capturable off: the CPU has no
    capturable implementation; the per-parameter loop if the CPU refuses the flags), so
    both start from the same parameters and see the same gradients. After ``STEPS`` steps
    the losses, the parameters (on openreg) and the optimizer's state must agree.
    """
    flags = _impl_kwargs(optim_info, impl)
    if flags is None:
        return Outcome("skip", detail=f"{optim_info.name} has no {impl} implementation")
    tol = BACKWARD_TOL.get(dtype, (0, 0))
    checked = 0
    for config in optimizer_configs(optim_info, dtype):
        kwargs = {**config.kwargs, **flags}
        if kwargs.get("fused") and kwargs.get("differentiable"):
            continue
        reference = {**kwargs, "capturable": False} if "capturable" in kwargs else kwargs
        with cpu_threads_of_kernels():
            try:
                expected = _run(optim_info, reference, "cpu", dtype)
            except (RuntimeError, ValueError):
                try:
                    expected = _run(optim_info, {**reference, "foreach": False, "fused": False},
                                    "cpu", dtype)
                except (RuntimeError, ValueError):
                    continue  # the CPU refuses the config whatever the flags
        try:
            actual = _run(optim_info, kwargs, device, dtype)
            torch.accelerator.synchronize()
            compare_results(actual[2], expected[2], "value", tol)
            compare_results(actual[0], expected[0], "value", tol)
            if optim_info.name not in STATE_IS_ROUNDING_NOISE:
                compare_results(actual[1], expected[1], "value", tol, check_device=False)
        except Mismatch as exc:
            return Outcome("fail", checked, f"config {config.desc!r}: {str(exc)[:300]}")
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [""])[0]
            return Outcome("error", checked, f"config {config.desc!r}: {type(exc).__name__}: "
                           f"{first[:300]}")
        checked += 1
    return Outcome("pass", checked) if checked else Outcome("skip", 0, "no config ran")
# LITERALINCLUDE END: TESTING_OPTIMIZER_CHECK

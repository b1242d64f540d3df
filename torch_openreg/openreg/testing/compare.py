"""Runs an OpInfo's sample inputs on openreg and on the CPU and compares the results.

The comparison (``compare_results``) and the moves (``to_device``) serve the module and
optimizer checks too (``modules.py``, ``optimizers.py``).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
import torch
from torch.nn.utils.rnn import PackedSequence
from torch.utils._pytree import tree_flatten

# Operators whose result is uninitialized memory: only the metadata can be compared.
METADATA_ONLY = {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty",
                 "new_empty_strided", "nn.functional.dropout", "nn.functional.dropout2d",
                 "nn.functional.dropout3d", "nn.functional.alpha_dropout",
                 "nn.functional.feature_alpha_dropout", "nn.functional.fractional_max_pool2d",
                 "nn.functional.fractional_max_pool3d"}
# Operators whose sample arguments PyTorch requires on the CPU on every device:
# only the sample's input moves to the device.
CPU_ARGUMENTS = {"tensor_split": "indices_or_sections must be a CPU tensor"}
# Wrapped in wrapper_set_seed, yet deterministic: compared by value.
SEEDED_BUT_DETERMINISTIC = {"item"}


# LITERALINCLUDE START: TESTING_RANDOM_OPS
def is_random_op(op) -> bool:
    """True for OpInfos whose result depends on the generator's numbers.

    OpInfo wraps every such operator in ``wrapper_set_seed``, which seeds the
    CPU generator with 42 around the call: the CPU result never changes, and an
    accelerator drawing from its own generator can never equal it. These are
    compared by distribution, not by value.
    """
    if op.name in SEEDED_BUT_DETERMINISTIC:
        return False
    code = getattr(op.op, "__code__", None)
    return code is not None and "wrapper_set_seed" in code.co_names
# LITERALINCLUDE END: TESTING_RANDOM_OPS


# Tolerances (rtol, atol) for a forward result of each dtype. Kernels that
# accumulate in another order than the CPU's (matrix products, reductions)
# differ in the last bits; the half-precision budgets are PyTorch's own.
FORWARD_TOL = {
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
    torch.float32: (1.3e-5, 1e-5),
    torch.complex64: (1.3e-5, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex128: (1e-7, 1e-7),
}
BACKWARD_TOL = {torch.float32: (1e-4, 1e-4), torch.float64: (1e-7, 1e-7)}


@dataclass
class Outcome:
    """What happened to one operator, dtype and direction."""

    status: str  # "pass", "fail", "error", "skip"
    samples: int = 0
    detail: str = ""
    compared: list = field(default_factory=list)


class Mismatch(AssertionError):
    pass


# LITERALINCLUDE START: TESTING_MOVE_SAMPLE
def to_device(t: torch.Tensor, device: str) -> torch.Tensor:
    """A copy of ``t`` on ``device`` with the same sizes, strides, offset and flags.

    OpInfo samples include transposed, sliced and expanded tensors on purpose:
    the whole storage is copied and viewed with the same geometry, so the
    device kernel meets the layout the CPU kernel met. A leaf that requires
    grad stays a leaf that requires grad.
    """
    if t.layout != torch.strided:
        return t.to(device)
    base = t.conj() if t.is_conj() else t
    base = torch._neg_view(base) if base.is_neg() else base
    with torch.no_grad():
        storage = torch.empty(0, dtype=t.dtype).set_(base.untyped_storage())
        moved = storage.to(device).as_strided(t.size(), t.stride(), t.storage_offset())
    if t.is_neg():
        moved = torch._neg_view(moved)
    if t.is_conj():
        moved = moved.conj()
    return moved.detach().requires_grad_(t.requires_grad)


def move_sample(sample, device: str, input_only: bool = False):
    """The sample with every tensor on ``device`` (and ``device=`` keyword arguments)."""

    def move(x):
        if isinstance(x, torch.Tensor):
            return to_device(x, device)
        if isinstance(x, PackedSequence):  # batch_sizes stays on the CPU, as PyTorch wants
            return PackedSequence(move(x.data), x.batch_sizes, move(x.sorted_indices),
                                  move(x.unsorted_indices))
        if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
            return type(x)(move(v) for v in x)
        if isinstance(x, dict):
            return {k: move(v) for k, v in x.items()}
        return x

    if input_only:
        return move(sample.input), tuple(sample.args), dict(sample.kwargs)
    kwargs = {k: move(v) for k, v in sample.kwargs.items()}
    if ("device" in kwargs and kwargs["device"] is not None
            and torch.device(kwargs["device"]).type == "cpu"):
        kwargs["device"] = device
    return move(sample.input), move(tuple(sample.args)), kwargs
# LITERALINCLUDE END: TESTING_MOVE_SAMPLE


def _leaves(x) -> list:
    return tree_flatten(x)[0]


def _ks_statistic(a: torch.Tensor, b: torch.Tensor) -> float:
    """The two-sample Kolmogorov-Smirnov statistic of two 1-d samples."""
    a, _ = torch.sort(a.double())
    b, _ = torch.sort(b.double())
    points = torch.cat([a, b])
    fa = torch.searchsorted(a, points, right=True).double() / a.numel()
    fb = torch.searchsorted(b, points, right=True).double() / b.numel()
    return float((fa - fb).abs().max())


# LITERALINCLUDE START: TESTING_COMPARE_RANDOM
def compare_distribution(actual: torch.Tensor, expected: torch.Tensor) -> None:
    """Two random results drawn from the same distribution, or a Mismatch.

    Same metadata; the same number of non-finite values; and a two-sample
    Kolmogorov-Smirnov test at a 1e-4 significance level, which a correct
    kernel fails once in ten thousand runs and any wrong distribution (a
    wrong scale, a shifted mean, a constant) fails at once.
    """
    a = actual.detach().cpu()
    e = expected.detach()
    if a.is_complex():
        a, e = torch.view_as_real(a), torch.view_as_real(e)
    a = a.reshape(-1).double()
    e = e.reshape(-1).double()
    finite_a, finite_e = a[torch.isfinite(a)], e[torch.isfinite(e)]
    if finite_a.numel() != finite_e.numel():
        raise Mismatch(f"{a.numel() - finite_a.numel()} non-finite values, CPU has "
                       f"{e.numel() - finite_e.numel()}")
    n = finite_a.numel()
    if n < 2:
        return
    # A constant (p=0, zero std) over many draws is no coincidence: exact.
    if n >= 64 and torch.equal(finite_e.min(), finite_e.max()):
        if not torch.equal(finite_a, finite_e):
            raise Mismatch("the CPU result is constant and openreg's differs")
        return
    critical = math.sqrt(-math.log(1e-4 / 2) / 2) * math.sqrt(2 / n)
    d = _ks_statistic(finite_a, finite_e)
    if d > critical:
        raise Mismatch(f"distributions differ: Kolmogorov-Smirnov D={d:.3f} > {critical:.3f}")
# LITERALINCLUDE END: TESTING_COMPARE_RANDOM


def _close(a: torch.Tensor, e: torch.Tensor, tol: tuple[float, float]) -> bool:
    a, e = a.detach().cpu(), e.detach()
    if a.layout != torch.strided:
        a, e = a.to_dense(), e.to_dense()
    return a.shape == e.shape and bool(torch.isclose(a, e, rtol=tol[0], atol=tol[1],
                                                     equal_nan=True).all())


# LITERALINCLUDE START: TESTING_COMPARE_RESULTS
def compare_results(actual, expected, mode: str, tol: tuple[float, float],
                    check_device: bool = True) -> int:
    """Compares two nested results leaf by leaf; returns how many tensors were compared."""
    a_leaves, e_leaves = _leaves(actual), _leaves(expected)
    if len(a_leaves) != len(e_leaves):
        raise Mismatch(f"{len(a_leaves)} results, CPU gives {len(e_leaves)}")
    count = 0
    for a, e in zip(a_leaves, e_leaves):
        if isinstance(e, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                raise Mismatch(f"result is {type(a).__name__}, CPU gives a tensor")
            if check_device and a.device.type == "cpu" and a.numel() > 0:
                raise Mismatch(f"result is on {a.device}, expected openreg")
            if a.shape != e.shape or a.dtype != e.dtype:
                raise Mismatch(f"result {tuple(a.shape)} {a.dtype}, CPU {tuple(e.shape)} {e.dtype}")
            if a.layout != e.layout:
                raise Mismatch(f"layout {a.layout}, CPU {e.layout}")
            if mode == "metadata":
                pass
            elif mode == "distribution":
                # Random operators with a deterministic sample (dropout_p=0) match by
                # value; rounding noise around ties would upset the rank test.
                if _close(a, e, tol):
                    count += 1
                    continue
                compare_distribution(a.to_dense() if a.layout != torch.strided else a,
                                     e.to_dense() if e.layout != torch.strided else e)
            else:
                a_cpu = a.detach().cpu()
                if a_cpu.layout != torch.strided:
                    a_cpu, e = a_cpu.to_dense(), e.to_dense()
                try:
                    torch.testing.assert_close(a_cpu, e.detach(), rtol=tol[0], atol=tol[1],
                                               equal_nan=True, check_device=False,
                                               check_stride=False)
                except AssertionError as exc:
                    raise Mismatch(str(exc).strip().splitlines()[0] + " " +
                                   " ".join(str(exc).strip().splitlines()[1:4])) from None
            count += 1
        elif isinstance(e, float) and isinstance(a, float):
            if not (a == e or (math.isnan(a) and math.isnan(e)) or
                    abs(a - e) <= tol[1] + tol[0] * abs(e)):
                raise Mismatch(f"result {a}, CPU gives {e}")
        elif mode == "value" and a != e and not isinstance(e, torch.dtype):
            raise Mismatch(f"result {a!r}, CPU gives {e!r}")
    return count
# LITERALINCLUDE END: TESTING_COMPARE_RESULTS


def _grad_leaves(x) -> list:
    return [t for t in _leaves(x) if isinstance(t, torch.Tensor) and t.requires_grad]


def _differentiable_outputs(out) -> list:
    return [t for t in _leaves(out) if isinstance(t, torch.Tensor) and t.requires_grad
            and (t.is_floating_point() or t.is_complex())]


def _run(op, sample_args, sample, backward: bool, seed: int):
    """The forward result, or the gradients of the sample's inputs."""
    inp, args, kwargs = sample_args
    out = op(inp, *args, **kwargs)
    if not backward:
        return out
    out = sample.output_process_fn_grad(out)
    outputs = _differentiable_outputs(out)
    inputs = _grad_leaves((inp, args, kwargs))
    if not outputs or not inputs:
        return None
    gen = torch.Generator().manual_seed(seed)
    grads = []
    for o in outputs:
        g = torch.randn(o.shape, dtype=o.dtype, generator=gen)
        grads.append(to_device(g, o.device.type) if o.device.type != "cpu" else g)
    return torch.autograd.grad(outputs, inputs, grads, allow_unused=True)


def mode_of(op) -> str:
    if op.name in METADATA_ONLY:
        return "metadata"
    return "distribution" if is_random_op(op) else "value"


# LITERALINCLUDE START: TESTING_CPU_THREADS
@contextlib.contextmanager
def cpu_threads_of_kernels():
    """Runs the CPU reference, and openreg's kernels, on one thread.

    Where a parallel loop's pieces end decides how a reduction rounds, and where a vector loop
    hands over to its scalar tail (the sign of a NaN, for one): a reference on two threads and
    a device kernel on one differ in the last bit, though both are PyTorch's CPU kernel. The
    device runs every kernel on fewer than 32,768 elements on one thread, whatever its kernel
    threads, and test samples are that small; larger kernels launched here run on one thread too.
    """
    saved, saved_kernels = torch.get_num_threads(), torch.openreg.get_kernel_threads()
    torch.set_num_threads(1)
    torch.openreg.set_kernel_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)
        torch.openreg.set_kernel_threads(saved_kernels)
# LITERALINCLUDE END: TESTING_CPU_THREADS


# LITERALINCLUDE START: TESTING_CHECK_OP
def check_op(op, dtype: torch.dtype, backward: bool = False, device: str = "openreg",
             max_samples: int | None = None) -> Outcome:
    """Runs ``op``'s sample inputs for ``dtype`` on ``device`` and on the CPU.

    The samples are made once, on the CPU, and copied to the device with the
    same geometry, so both sides compute on identical inputs. Forward compares
    the results; backward compares the gradients of every input that requires
    grad, for the same random output gradients. A sample on which the CPU
    raises must raise on the device too (PyTorch's own error checks).
    """
    if backward and not op.supports_autograd:
        return Outcome("skip", detail="no autograd")
    mode = mode_of(op)
    tol = (BACKWARD_TOL if backward else FORWARD_TOL).get(dtype, (0.0, 0.0))
    samples = op.sample_inputs("cpu", dtype, requires_grad=backward)
    checked = 0
    for index, sample in enumerate(samples):
        if max_samples is not None and index >= max_samples:
            break
        input_only = op.name in CPU_ARGUMENTS
        cpu_args = move_sample(sample, "cpu")
        # A sample that names a device (x.to("cpu")) may return a CPU tensor.
        names_device = any(isinstance(a, (torch.device, str)) for a in sample.args)
        try:
            with cpu_threads_of_kernels():
                expected = _run(op, cpu_args, sample, backward, seed=index)
            cpu_error = None
        except Exception as exc:  # the CPU refuses this sample
            expected, cpu_error = None, exc
        try:  # moving the sample is the device's work too: it may refuse a layout
            dev_args = move_sample(sample, device, input_only)
            actual = _run(op, dev_args, sample, backward, seed=index)
            torch.accelerator.synchronize()  # a kernel's failure surfaces here, for this sample
        except Exception as exc:
            if cpu_error is not None:
                continue  # both refuse: PyTorch's own argument check
            first = (str(exc).strip().splitlines() or [""])[0]
            return Outcome("error", checked, f"sample {index}: {type(exc).__name__}: {first[:300]}")
        if cpu_error is not None:
            return Outcome("fail", checked, f"sample {index}: the CPU raises "
                           f"{type(cpu_error).__name__}, openreg does not")
        if backward and expected is None:
            continue
        try:
            compare_results(actual, expected, mode, tol, check_device=not names_device)
        except Mismatch as exc:
            return Outcome("fail", checked, f"sample {index}: {str(exc)[:300]}")
        except Exception as exc:  # reading the result back raised
            first = (str(exc).strip().splitlines() or [""])[0]
            return Outcome("error", checked, f"sample {index}: {type(exc).__name__}: {first[:300]}")
        checked += 1
    if checked == 0:
        return Outcome("skip", 0, "no sample ran on both devices")
    return Outcome("pass", checked)
# LITERALINCLUDE END: TESTING_CHECK_OP


def op_key(op) -> str:
    """The name used in reports and in the expected-failure table."""
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


__all__ = ["Outcome", "check_op", "compare_distribution", "dtype_name",
           "is_random_op", "move_sample", "op_key", "to_device"]

"""Runs a ModuleInfo's samples on openreg and on the CPU: one check of a module's contract each."""

from __future__ import annotations

import copy
import io

import torch

from .compare import (
    BACKWARD_TOL,
    FORWARD_TOL,
    Mismatch,
    Outcome,
    _differentiable_outputs,
    _grad_leaves,
    _leaves,
    compare_results,
    cpu_threads_of_kernels,
    move_sample,
    to_device,
)

# What each check proves; the test classes make one test per module, dtype and check.
MODULE_CHECKS = ("forward", "backward", "gradgrad", "memory_format", "to", "to_identity",
                 "state_dict")
# Modules whose output depends on the generator's numbers (pooling regions drawn at random):
# only the metadata of their results can be compared.
RANDOM_MODULES = {"nn.FractionalMaxPool2d", "nn.FractionalMaxPool3d"}


class _Pair:
    """One sample's module and inputs, on the CPU and on the device, from the same state."""

    def __init__(self, module_info, sample, dtype, training, device, index):
        torch.manual_seed(index)
        cons, fwd = sample.constructor_input, sample.forward_input
        self.cpu = module_info.module_cls(*cons.args, **cons.kwargs).to(dtype).train(training)
        fake = type("S", (), {"input": (), "args": fwd.args, "kwargs": fwd.kwargs})
        _, self.cpu_args, self.cpu_kwargs = move_sample(fake, "cpu")
        _, self.dev_args, self.dev_kwargs = move_sample(fake, device)
        if module_info.is_lazy:  # materialize the parameters once, on the CPU
            with torch.no_grad(), cpu_threads_of_kernels():
                self.cpu(*self.cpu_args, **self.cpu_kwargs)
        self.dev = copy.deepcopy(self.cpu).to(device)
        self.mode = "metadata" if module_info.name in RANDOM_MODULES else "value"
        self.index, self.device = index, device
        # With the CPU on both sides (is the sample refused by the CPU?) nothing is compared.
        self.compare = compare_results if device != "cpu" else lambda *args, **kwargs: 0

    def forward(self):
        with cpu_threads_of_kernels():
            expected = self.cpu(*self.cpu_args, **self.cpu_kwargs)
        return self.dev(*self.dev_args, **self.dev_kwargs), expected

    def output_grads(self, outputs):
        """The same random gradients for the outputs on both sides (seeded by the sample)."""
        gen = torch.Generator().manual_seed(self.index)
        grads = [torch.randn(o.shape, dtype=o.dtype, generator=gen) for o in outputs]
        return [to_device(g, o.device.type) if o.device.type != "cpu" else g
                for g, o in zip(grads, outputs)]


def _state(module) -> dict:
    return {k: v for k, v in module.state_dict(keep_vars=False).items()
            if isinstance(v, torch.Tensor)}


# LITERALINCLUDE START: TESTING_MODULE_GRADS
def _gradients(module, args, kwargs, out, pair, order: int):
    """Gradients of every parameter and grad-requiring input, of the first or second order.

    The second order differentiates the first-order gradients, weighted by a second set of
    seeded random tensors, with respect to the same inputs: what ``gradgradcheck`` probes.
    """
    outputs = _differentiable_outputs(out)
    inputs = [p for p in module.parameters() if p.requires_grad] + _grad_leaves((args, kwargs))
    if not outputs or not inputs:
        return None
    with cpu_threads_of_kernels():
        first = torch.autograd.grad(outputs, inputs, pair.output_grads(outputs),
                                    allow_unused=True, create_graph=order == 2)
        if order == 1:
            return first
        used = [g for g in first if g is not None and g.requires_grad]
        if not used:
            return None
        return torch.autograd.grad(used, inputs, pair.output_grads(used), allow_unused=True)
# LITERALINCLUDE END: TESTING_MODULE_GRADS


def _memory_format_of(t: torch.Tensor):
    if t.dim() == 4:
        return torch.channels_last
    return torch.channels_last_3d if t.dim() == 5 else None


def _formats(out) -> list:
    """For each 4-d or 5-d result: (contiguous, contiguous in the channels-last format)."""
    return [(t.is_contiguous(), t.is_contiguous(memory_format=_memory_format_of(t)))
            for t in _leaves(out) if isinstance(t, torch.Tensor) and _memory_format_of(t)]


# LITERALINCLUDE START: TESTING_MODULE_MEMORY_FORMAT
def _check_memory_format(pair, dtype) -> bool:
    """Channels-last inputs, module, or both: the CPU's values and the CPU's memory format.

    Returns False when the sample has no 4-d or 5-d input. A conversion the CPU refuses
    (a 5-d weight in a 4-d format) is skipped on both sides.
    """
    tensors = [t for t in _leaves((pair.cpu_args, pair.cpu_kwargs))
               if isinstance(t, torch.Tensor) and _memory_format_of(t)]
    if not tensors:
        return False
    fmt = _memory_format_of(tensors[0])

    def convert(x):
        if isinstance(x, torch.Tensor) and _memory_format_of(x) is fmt:
            return x.detach().contiguous(memory_format=fmt).requires_grad_(x.requires_grad)
        return x

    for inputs_too, module_too in ((True, False), (False, True), (True, True)):
        cpu, dev = copy.deepcopy(pair.cpu), copy.deepcopy(pair.dev)
        if module_too:
            try:
                cpu.to(memory_format=fmt)
            except RuntimeError:
                continue
            dev.to(memory_format=fmt)
        args = [(pair.cpu_args, pair.cpu_kwargs), (pair.dev_args, pair.dev_kwargs)]
        if inputs_too:
            args = [([convert(a) for a in a_], {k: convert(v) for k, v in k_.items()})
                    for a_, k_ in args]
        with cpu_threads_of_kernels():
            expected = cpu(*args[0][0], **args[0][1])
        actual = dev(*args[1][0], **args[1][1])
        pair.compare(actual, expected, pair.mode, FORWARD_TOL.get(dtype, (0, 0)))
        if _formats(actual) != _formats(expected):
            raise Mismatch(f"inputs channels-last {inputs_too}, module {module_too}: "
                           f"(contiguous, channels-last) {_formats(actual)}, "
                           f"CPU {_formats(expected)}")
        grads = [_gradients(cpu, *args[0], expected, pair, 1),
                 _gradients(dev, *args[1], actual, pair, 1)]
        pair.compare(grads[1], grads[0], pair.mode, BACKWARD_TOL.get(dtype, (0, 0)))
    return True
# LITERALINCLUDE END: TESTING_MODULE_MEMORY_FORMAT


# LITERALINCLUDE START: TESTING_MODULE_TO
def _check_to(pair, dtype, identity: bool) -> None:
    """``module.to(device)`` on a CPU module that has gradients and updated buffers.

    Moves every parameter, gradient and buffer with its values; the moved module computes
    what the CPU module computes. ``identity``: the Parameter objects stay the same Python
    objects (an optimizer built before the move still holds them), which needs
    ``torch._has_compatible_shallow_copy_type`` to be true for a CPU and a device tensor.
    """
    module = copy.deepcopy(pair.cpu)
    with cpu_threads_of_kernels():
        out = module(*pair.cpu_args, **pair.cpu_kwargs)
        outputs = _differentiable_outputs(out)
        if outputs and any(p.requires_grad for p in module.parameters()):
            torch.autograd.backward(outputs, pair.output_grads(outputs), inputs=[
                p for p in module.parameters() if p.requires_grad])
    before = dict(module.named_parameters())
    expected_state = {k: v.clone() for k, v in _state(module).items()}
    expected_grads = {k: p.grad.clone() for k, p in before.items() if p.grad is not None}
    module.to(pair.device)
    after = dict(module.named_parameters())
    if identity:
        replaced = [k for k in before if after[k] is not before[k]]
        if replaced:
            raise Mismatch(f"module.to replaced the Parameter objects {replaced}")
        return
    pair.compare(_state(module), expected_state, "value", (0, 0))
    grads = {k: p.grad for k, p in after.items() if p.grad is not None}
    if grads.keys() != expected_grads.keys():
        raise Mismatch(f"gradients of {sorted(grads)} after the move, CPU {sorted(expected_grads)}")
    pair.compare(grads, expected_grads, "value", (0, 0))
    with cpu_threads_of_kernels():
        expected = pair.cpu(*pair.cpu_args, **pair.cpu_kwargs)
    pair.compare(module(*pair.dev_args, **pair.dev_kwargs), expected, pair.mode,
                    FORWARD_TOL.get(dtype, (0, 0)))
# LITERALINCLUDE END: TESTING_MODULE_TO


# LITERALINCLUDE START: TESTING_MODULE_STATE_DICT
def _check_state_dict(pair, dtype) -> None:
    """The device module's state_dict: on the device, the CPU's values, through torch.save.

    Saved and loaded back (the tensors stay on openreg), it loads into a fresh device module
    and into a CPU module, and the CPU's state_dict loads into a device module; each then
    computes what the CPU module computes.
    """
    state = pair.dev.state_dict()
    on_cpu = [k for k, v in _state(pair.dev).items() if v.device.type == "cpu" and v.numel()]
    if on_cpu:
        raise Mismatch(f"state_dict entries {on_cpu} are on the CPU")
    pair.compare(_state(pair.dev), _state(pair.cpu), "value", (0, 0))
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)
    pair.compare(loaded, state, "value", (0, 0))
    with cpu_threads_of_kernels():
        expected = pair.cpu(*pair.cpu_args, **pair.cpu_kwargs)
    on_device = (pair.dev_args, pair.dev_kwargs)
    targets = [(copy.deepcopy(pair.dev), loaded, on_device),
               (copy.deepcopy(pair.cpu), loaded, (pair.cpu_args, pair.cpu_kwargs)),
               (copy.deepcopy(pair.dev), pair.cpu.state_dict(), on_device)]
    for module, source, (args, kwargs) in targets:
        with torch.no_grad():
            for p in module.parameters():
                p.zero_()
        module.load_state_dict(source)
        with cpu_threads_of_kernels():
            actual = module(*args, **kwargs)
        pair.compare(actual, expected, pair.mode, FORWARD_TOL.get(dtype, (0, 0)),
                        check_device=False)
# LITERALINCLUDE END: TESTING_MODULE_STATE_DICT


def _run_check(pair, check: str, dtype) -> bool:
    """One check on one sample; False when the check does not apply to the sample."""
    if check == "memory_format":
        return _check_memory_format(pair, dtype)
    if check in ("to", "to_identity"):
        _check_to(pair, dtype, identity=check == "to_identity")
    elif check == "state_dict":
        _check_state_dict(pair, dtype)
    else:
        actual, expected = pair.forward()
        pair.compare(actual, expected, pair.mode, FORWARD_TOL.get(dtype, (0, 0)))
        if check == "forward":  # and the buffers the forward updates
            pair.compare(_state(pair.dev), _state(pair.cpu), "value",
                            FORWARD_TOL.get(dtype, (0, 0)))
            return True
        order = 2 if check == "gradgrad" else 1
        expected = _gradients(pair.cpu, pair.cpu_args, pair.cpu_kwargs, expected, pair, order)
        if expected is None:
            return False
        actual = _gradients(pair.dev, pair.dev_args, pair.dev_kwargs, actual, pair, order)
        pair.compare(actual, expected, pair.mode, BACKWARD_TOL.get(dtype, (0, 0)))
    return True


# LITERALINCLUDE START: TESTING_CHECK_MODULE
def check_module(module_info, dtype: torch.dtype, check: str = "backward",
                 training: bool = True, device: str = "openreg",
                 max_samples: int | None = None) -> Outcome:
    """Runs one check (``MODULE_CHECKS``) on a ModuleInfo's samples, openreg against the CPU.

    One module is built on the CPU and deep-copied to the device, so both start from the same
    parameters. ``forward`` compares the outputs and the buffers the forward updates (batch
    norm's running statistics); ``backward`` the gradients of every parameter and of every
    input that requires grad, for the same output gradients; ``gradgrad`` the second-order
    gradients, where the ModuleInfo supports them. A sample on which the check raises is
    run again with the CPU on both sides: if the CPU raises too (a derivative PyTorch does
    not implement, a layout its CPU kernel refuses), both refuse and the sample is skipped.
    """
    if check not in MODULE_CHECKS:
        raise ValueError(f"unknown module check {check!r}; one of {MODULE_CHECKS}")
    if check == "gradgrad" and not module_info.supports_gradgrad:
        return Outcome("skip", detail="the ModuleInfo does not support second-order gradients")
    samples = module_info.module_inputs_func(module_info, device="cpu", dtype=dtype,
                                             requires_grad=True, training=training)
    checked = 0
    for index, sample in enumerate(samples):
        if max_samples is not None and index >= max_samples:
            break
        if sample.forward_input is None:
            continue
        where = f"sample {index} ({sample.desc or 'default'}) {check}"
        try:
            applies = _run_check(_Pair(module_info, sample, dtype, training, device, index),
                                 check, dtype)
            torch.accelerator.synchronize()
        except Mismatch as exc:
            return Outcome("fail", checked, f"{where}: {str(exc)[:300]}")
        except Exception as exc:
            try:
                _run_check(_Pair(module_info, sample, dtype, training, "cpu", index), check,
                           dtype)
            except Mismatch:
                pass
            except Exception:
                continue  # the CPU refuses the sample too
            first = (str(exc).strip().splitlines() or [""])[0]
            return Outcome("error", checked, f"{where}: {type(exc).__name__}: {first[:300]}")
        checked += applies
    return Outcome("pass", checked) if checked else Outcome("skip", 0, "no sample applies")
# LITERALINCLUDE END: TESTING_CHECK_MODULE

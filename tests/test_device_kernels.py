"""Native kernels (add, sub, mul, div, mm, fill_, zero_, the short pointwise paths, cat, stack,
_to_copy) agree with the CPU, and check like it."""

import os
import re

import pytest
import torch

from conftest import run_example, run_python
from torch_openreg.openreg.testing.compare import cpu_threads_of_kernels, move_sample

CASES = [
    ((3, 4), (3, 4)),
    ((3, 1), (1, 4)),  # broadcasting
    ((2, 3, 4), (4,)),
    ((5,), ()),  # 0-dim device tensor
]
OPS = {
    "add": lambda a, b: torch.add(a, b, alpha=2),
    "sub": lambda a, b: torch.sub(a, b, alpha=3),
    "mul": torch.mul,
    "div": torch.div,
}


def rand(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype)
    return torch.randint(1, 9, shape, dtype=dtype)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shapes", CASES, ids=str)
@pytest.mark.parametrize("dtypes", [(torch.float32, torch.float32), (torch.int64, torch.float32),
                                    (torch.int32, torch.int64), (torch.float64, torch.float16)],
                         ids=str)
def test_binary_matches_cpu(op, shapes, dtypes):
    a = rand(shapes[0], dtypes[0])
    b = rand(shapes[1], dtypes[1])
    expected = OPS[op](a, b)
    got = OPS[op](a.to("openreg"), b.to("openreg"))
    assert got.device.type == "openreg" and got.dtype == expected.dtype
    torch.testing.assert_close(got.cpu(), expected)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_python_scalars_promote_like_cpu(op):
    a = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    for scalar in (2, 2.5, True):
        if op == "sub" and scalar is True:
            continue
        expected = getattr(torch, op)(a, scalar)
        got = getattr(torch, op)(a.to("openreg"), scalar)
        assert got.dtype == expected.dtype
        torch.testing.assert_close(got.cpu(), expected)


def test_inplace_and_out_variants():
    a = torch.randn(3, 4)
    b = torch.randn(4)
    d = a.to("openreg")
    d.add_(b.to("openreg"), alpha=0.5).mul_(2).sub_(1).div_(3)
    torch.testing.assert_close(d.cpu(), (((a + 0.5 * b) * 2) - 1) / 3)
    out = torch.empty(0, device="openreg")
    torch.mul(a.to("openreg"), b.to("openreg"), out=out)
    assert out.shape == (3, 4)
    torch.testing.assert_close(out.cpu(), a * b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int32],
                         ids=str)
@pytest.mark.parametrize("n", [1000, 40000])  # the raw loop, and PyTorch's vectorized one
def test_relu_and_relu_inplace_match_cpu(dtype, n):
    x = (torch.randn(n) * 10).to(dtype)
    if dtype.is_floating_point:
        x[::7] = float("nan")
    d = x.to("openreg")

    def same(a, b):  # bit for bit, NaN where the CPU has NaN
        torch.testing.assert_close(a.cpu(), b, rtol=0, atol=0, equal_nan=True)

    same(torch.relu(d), torch.relu(x))
    strided = d[::2]  # not contiguous: PyTorch's loop, in place through the view
    assert strided.relu_() is strided
    expected = x.clone()
    expected[::2].relu_()
    same(d, expected)
    same(d.relu_(), expected.relu())
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        torch.zeros(3, device="openreg").expand(2, 3).relu_()  # raised by the call itself
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        torch.ones(2, dtype=torch.bool, device="openreg").relu_()


@pytest.mark.parametrize("reduce", [torch.sum, torch.mean], ids=["sum", "mean"])
@pytest.mark.parametrize("n", [1, 7, 1000, 40000])  # 40000: on the kernel threads
def test_full_sum_and_mean_match_cpu(reduce, n):
    for dtype in (torch.float32, torch.float64):
        x = torch.randn(n, dtype=dtype)
        with cpu_threads_of_kernels():  # the CPU's bits, split across as many threads
            expected = reduce(x)
        assert torch.equal(reduce(x.to("openreg")).cpu(), expected)
        torch.testing.assert_close(reduce(x.to("openreg")[::2]).cpu(), reduce(x[::2]))
        torch.testing.assert_close(reduce(x.to("openreg"), dtype=torch.float64).cpu(),
                                   reduce(x, dtype=torch.float64))
    ints = torch.arange(n)
    if reduce is torch.sum:
        assert reduce(ints.to("openreg")).item() == reduce(ints).item()
    else:
        with pytest.raises(RuntimeError, match="could not infer output dtype"):
            reduce(ints.to("openreg"))
    empty = reduce(torch.empty(0, device="openreg")).item()
    assert empty == 0.0 if reduce is torch.sum else empty != empty  # 0 and NaN, as on the CPU


ROW_REDUCTIONS = [  # shape, keyword arguments: the short path's cases and the borrowed ones
    ((16, 64), dict(dim=1)), ((16, 64), dict(dim=-1, keepdim=True)), ((4, 5, 6), dict(dim=(-1,))),
    ((7,), dict(dim=0)), ((), dict(dim=0)), ((3, 4), dict(dim=[])), ((3, 4), dict(dim=[], keepdim=True)),
    ((16, 64), dict(dim=0)), ((4, 5, 6), dict(dim=(0, 2))), ((0, 4), dict(dim=1)), ((4, 0), dict(dim=1)),
    ((300, 300), dict(dim=1)),  # large enough for the kernel threads
]


REDUCERS = {
    "sum": lambda x, **kw: x.sum(**kw),
    "mean": lambda x, **kw: x.mean(**kw),
    "vector_norm": lambda x, **kw: torch.linalg.vector_norm(x, **kw),
    "vector_norm (1)": lambda x, **kw: torch.linalg.vector_norm(x, 1, **kw),
    "vector_norm (inf)": lambda x, **kw: torch.linalg.vector_norm(x, float("inf"), **kw),
    "vector_norm (0)": lambda x, **kw: torch.linalg.vector_norm(x, 0, **kw),
}


@pytest.mark.parametrize("reduce", REDUCERS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bfloat16])
def test_reductions_over_dimensions_match_cpu(reduce, dtype):
    """sum, mean and vector_norm over dimensions: the last or every dimension of small float
    tensors on the short path, the rest borrowed; results (bit for bit), shapes, dtypes and
    errors as on the CPU."""
    torch.manual_seed(0)
    fn = REDUCERS[reduce]
    for shape, kwargs in ROW_REDUCTIONS:
        x = (torch.randn(shape) * 10).to(dtype)
        try:
            expected = fn(x, **kwargs)
        except RuntimeError as error:  # the mean or norm of integers
            with pytest.raises(RuntimeError, match=str(error).split(":")[0]):
                fn(x.to("openreg"), **kwargs)
            continue
        got = fn(x.to("openreg"), **kwargs).cpu()
        assert got.shape == expected.shape and got.dtype == expected.dtype, (shape, kwargs)
        assert torch.equal(got, expected) or (got.isnan() & expected.isnan()).all(), (shape, kwargs)
    x = torch.randn(16, 64, device="openreg")
    assert fn(x, dim=1, dtype=torch.float64).dtype == torch.float64
    torch.testing.assert_close(fn(x.t(), dim=1).cpu(), fn(x.cpu().t(), dim=1))
    with pytest.raises(IndexError, match="Dimension out of range"):
        fn(x, dim=5)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bfloat16])
def test_argmax_and_argmin_match_cpu(op, dtype):
    """Small contiguous float tensors on the short path (NaNs and ties included), the rest
    borrowed: the CPU's indices, shapes and errors."""
    torch.manual_seed(0)
    x = special((16, 64), torch.float32).round().to(dtype)  # rounding makes ties
    cases = [(x, {}), (x, dict(keepdim=True)), (x, dict(dim=0)), (x, dict(dim=1, keepdim=True)),
             (x, dict(dim=-1)), (x[0], dict(dim=0)), (torch.tensor(3.0).to(dtype), {}),
             (torch.tensor(3.0).to(dtype), dict(dim=-1, keepdim=True)), (x.t(), dict(dim=1)),
             (torch.randn(300, 300).to(dtype), dict(dim=1))]  # strided; above the short path
    for t, kwargs in cases:
        expected = getattr(t, op)(**kwargs)
        got = getattr(t.to("openreg"), op)(**kwargs)
        assert got.dtype == torch.int64 and got.shape == expected.shape, (t.shape, kwargs)
        assert torch.equal(got.cpu(), expected), (t.shape, kwargs)
    with pytest.raises(IndexError, match="Dimension out of range"):
        getattr(x.to("openreg"), op)(dim=2)
    with pytest.raises(IndexError, match="numel"):  # as on the CPU
        getattr(torch.empty(0, device="openreg"), op)()


EXTREMA = {"amax": lambda x, **kw: x.amax(**kw), "amin": lambda x, **kw: x.amin(**kw)}


@pytest.mark.parametrize("op", EXTREMA)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bfloat16])
def test_amax_and_amin_match_cpu(op, dtype):
    """amax and amin: the last or every dimension of contiguous float tensors on the short
    path (NaNs and infinities included), the rest borrowed; the CPU's values, shapes, errors."""
    torch.manual_seed(0)
    fn = EXTREMA[op]
    x = special((16, 64), torch.float32).to(dtype)
    for shape, kwargs in ROW_REDUCTIONS:
        t = (torch.randn(shape) * 10).to(dtype) if shape != (16, 64) else x
        kwargs = {k: list(v) if isinstance(v, tuple) else v for k, v in kwargs.items()}
        try:
            expected = fn(t, **kwargs)
        except (RuntimeError, IndexError) as error:  # an empty dimension to reduce
            with pytest.raises(type(error), match=re.escape(str(error).split(".")[0])):
                fn(t.to("openreg"), **kwargs)
            continue
        got = fn(t.to("openreg"), **kwargs).cpu()
        assert got.shape == expected.shape and got.dtype == expected.dtype, (shape, kwargs)
        assert torch.equal(got.isnan(), expected.isnan()), (shape, kwargs)
        assert torch.equal(got.nan_to_num(), expected.nan_to_num()), (shape, kwargs)
    assert torch.equal(fn(x.to("openreg")).cpu().isnan(), fn(x).isnan())  # every dimension
    with pytest.raises(IndexError, match="Dimension out of range"):
        fn(x.to("openreg"), dim=5)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        fn(torch.empty(0, device="openreg"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bfloat16])
def test_cumsum_matches_cpu(dtype):
    """cumsum of contiguous float tensors on the short path along any dimension, the rest
    (integers, other dtypes, strided inputs) borrowed: the CPU's bits, dtypes and errors."""
    torch.manual_seed(0)
    for shape in [(), (1,), (1024,), (16, 64), (3, 4, 5), (40000,), (0, 3)]:
        t = (torch.randn(shape) * 10).to(dtype)
        for dim in range(-max(t.dim(), 1), max(t.dim(), 1)):
            with cpu_threads_of_kernels():
                expected = t.cumsum(dim)
            got = t.to("openreg").cumsum(dim).cpu()
            assert got.dtype == expected.dtype and torch.equal(got, expected), (shape, dim)
    x = torch.randn(16, 64).to(dtype)
    assert torch.equal(x.to("openreg").t().cumsum(1).cpu(), x.t().cumsum(1))  # strided
    assert x.to("openreg").cumsum(0, dtype=torch.float64).dtype == torch.float64
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.to("openreg").cumsum(2)


def test_inplace_checks_happen_before_launch():
    x = torch.ones(3, dtype=torch.int64, device="openreg")
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        x.add_(torch.ones(3, device="openreg"))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        x.add_(torch.ones(2, 3, dtype=torch.int64, device="openreg"))
    with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
        torch.add(x, x, alpha=0.5)
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
        torch.ones(2, dtype=torch.bool, device="openreg") - torch.ones(2, dtype=torch.bool, device="openreg")
    assert torch.equal(x.cpu(), torch.ones(3, dtype=torch.int64))  # untouched


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.complex64], ids=str)
def test_mm_matches_cpu(dtype):
    a = rand((7, 5), dtype) if not dtype.is_complex else torch.randn(7, 5, dtype=dtype)
    b = rand((5, 3), dtype) if not dtype.is_complex else torch.randn(5, 3, dtype=dtype)
    got = a.to("openreg") @ b.to("openreg")
    torch.testing.assert_close(got.cpu(), a @ b)
    out = torch.empty(0, dtype=dtype, device="openreg")
    torch.mm(a.to("openreg"), b.to("openreg"), out=out)
    torch.testing.assert_close(out.cpu(), a @ b)
    torch.testing.assert_close((a.to("openreg").t().contiguous().t() @ b.to("openreg")).cpu(), a @ b)


def test_mm_errors():
    a = torch.ones(2, 3, device="openreg")
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"):
        a @ a
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        torch.mm(a, torch.ones(3, 2, dtype=torch.float64, device="openreg"))


def test_fill_and_zero_on_strided_views():
    x = torch.arange(12.0, device="openreg").reshape(3, 4)
    x[:, 1].fill_(-1)
    x[2].zero_()
    expected = torch.arange(12.0).reshape(3, 4)
    expected[:, 1] = -1
    expected[2] = 0
    assert torch.equal(x.cpu(), expected)


SHORT_UNARY = {
    "neg": torch.neg, "abs": torch.abs, "sigmoid": torch.sigmoid, "tanh": torch.tanh,
    "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "sin": torch.sin, "cos": torch.cos, "isfinite": torch.isfinite,
    "clamp": lambda x: x.clamp(-0.5, 0.5), "clamp (min)": lambda x: x.clamp(min=0.25),
    "leaky_relu": lambda x: torch.nn.functional.leaky_relu(x, 0.2),
    "pow": lambda x: x.pow(2), "pow (0.5)": lambda x: x.pow(0.5),
    "eq (scalar)": lambda x: x == 0, "ne (scalar)": lambda x: x != 0,
    "lt (scalar)": lambda x: x < 0.5, "le (scalar)": lambda x: x <= 0.5,
    "gt (scalar)": lambda x: x > 0.5, "ge (scalar)": lambda x: x >= 0.5,
}
SHORT_BINARY = {
    "maximum": torch.maximum, "minimum": torch.minimum, "eq": torch.eq, "ne": torch.ne,
    "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge,
    "threshold_backward": lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.1),
}
SHORT_IN_PLACE = {
    "addcmul_": lambda x, y, z: x.addcmul_(y, z, value=0.75),
    "addcdiv_": lambda x, y, z: x.addcdiv_(y, z, value=0.75),
    "lerp_": lambda x, y, z: x.lerp_(y, 0.3),
}
SHORT = list(SHORT_UNARY) + list(SHORT_BINARY) + list(SHORT_IN_PLACE)


def special(shape, dtype):
    """Random values with NaN, infinities and signed zeros among them."""
    x = torch.randn(shape).mul_(3)
    flat = x.view(-1)
    for i, v in enumerate([float("nan"), float("inf"), -float("inf"), 0.0, -0.0]):
        if i < flat.numel():
            flat[i * 7 % flat.numel()] = v
    return x.to(dtype)


def bits_equal(got, expected):
    """Bit for bit: the short path runs the CPU kernel itself (NaNs compare by their bits too)."""
    assert got.device.type == "openreg" and got.dtype == expected.dtype
    assert got.shape == expected.shape and got.stride() == expected.stride()
    got = got.cpu()
    if expected.dtype.is_floating_point:
        width = {2: torch.int16, 4: torch.int32, 8: torch.int64}[expected.element_size()]
        got, expected = got.contiguous().view(width), expected.contiguous().view(width)
    assert torch.equal(got, expected)


FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(1000,), (7, 9), (0, 3), (40000,)], ids=str)
@pytest.mark.parametrize("name", SHORT)
def test_short_pointwise_paths_are_the_cpu_kernels(name, shape, dtype):
    x, y, z = special(shape, dtype), special(shape, dtype).flip(-1), special(shape, dtype) * 0.5
    dx, dy, dz = x.to("openreg"), y.to("openreg"), z.to("openreg")
    with cpu_threads_of_kernels():  # where a vector loop's pieces end moves NaN's sign bit
        if name in SHORT_UNARY:
            bits_equal(SHORT_UNARY[name](dx), SHORT_UNARY[name](x))
        elif name in SHORT_BINARY:
            bits_equal(SHORT_BINARY[name](dx, dy), SHORT_BINARY[name](x, y))
        else:
            result = SHORT_IN_PLACE[name](dx, dy, dz)
            assert result is dx
            bits_equal(dx, SHORT_IN_PLACE[name](x, y, z))


def same_outcome(fn, *args):
    """fn on CPU tensors and on their openreg copies: the same values, dtype and strides, or the
    same error (raised by the call, or, if the CPU kernel raised it inside the device's kernel,
    by the next synchronization, as a GPU reports a kernel's failure)."""
    on_device = [a.to("openreg") for a in args]  # before fn, which may write to `args`
    try:
        expected = fn(*args)
    except RuntimeError as error:
        message = str(error).splitlines()[0]
        with pytest.raises(RuntimeError, match=re.escape(message[:40])):
            fn(*on_device)
            torch.openreg.synchronize()
        return
    got = fn(*on_device)
    torch.testing.assert_close(got.cpu(), expected, equal_nan=True)
    assert got.dtype == expected.dtype and got.stride() == expected.stride()


@pytest.mark.parametrize("name", SHORT)
def test_short_pointwise_paths_leave_other_cases_to_pytorch(name):
    """Integers, strided views, broadcasting, mixed dtypes, complex scalars and wrong devices:
    the CPU's results and the CPU's errors."""
    x = torch.arange(-6, 6).reshape(3, 4)
    f = torch.randn(4, 3).t()  # strided
    cases = [(x, x.flip(0)), (f, torch.randn(3, 4)), (torch.randn(3, 4), torch.randn(4)),
             (torch.randn(3, 4), torch.randn(3, 4, dtype=torch.float64))]
    for a, b in cases:
        if name in SHORT_UNARY:  # sqrt of integers is a float, as on the CPU
            same_outcome(SHORT_UNARY[name], a)
        elif name in SHORT_BINARY:
            same_outcome(SHORT_BINARY[name], a, b)
        else:
            a = a.double() if b.dtype == torch.float64 else a.clone()
            same_outcome(lambda p, q: SHORT_IN_PLACE[name](p.clone(), q, q), a, b)
    a, b = torch.randn(3, device="openreg:0"), torch.randn(3, device="openreg:1")
    if name in SHORT_BINARY:
        with pytest.raises(RuntimeError, match="same device"):
            SHORT_BINARY[name](a, b)
    if name in SHORT_IN_PLACE:
        with pytest.raises(RuntimeError, match="same device"):
            SHORT_IN_PLACE[name](a, b, b)
    if name == "neg":
        with pytest.raises(RuntimeError, match="bool"):
            torch.neg(torch.ones(3, dtype=torch.bool, device="openreg"))
    if name == "pow":  # a complex scalar makes a complex result
        same_outcome(lambda t: t.pow(2j), torch.randn(5))
        same_outcome(lambda t: t == 1j, torch.randn(5))


FOREACH = {  # in place on the list p; q and r are lists of the same shapes
    "_foreach_add_ (list)": lambda p, q, r: torch._foreach_add_(p, q, alpha=0.5),
    "_foreach_add_ (scalar)": lambda p, q, r: torch._foreach_add_(p, 1.5),
    "_foreach_mul_ (list)": lambda p, q, r: torch._foreach_mul_(p, q),
    "_foreach_mul_ (scalar)": lambda p, q, r: torch._foreach_mul_(p, 0.3),
    "_foreach_div_ (list)": lambda p, q, r: torch._foreach_div_(p, q),
    "_foreach_div_ (scalar)": lambda p, q, r: torch._foreach_div_(p, 3.0),
    "_foreach_addcmul_": lambda p, q, r: torch._foreach_addcmul_(p, q, r, value=0.75),
    "_foreach_addcdiv_": lambda p, q, r: torch._foreach_addcdiv_(p, q, r, value=0.75),
    "_foreach_lerp_": lambda p, q, r: torch._foreach_lerp_(p, q, 0.3),
    "_foreach_sqrt_": lambda p, q, r: torch._foreach_sqrt_(p),
}
FOREACH_SHAPES = [(1000,), (7, 9), (0, 3), (40000,)]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", FOREACH)
def test_foreach_short_paths_are_the_cpu_kernels(name, dtype):
    """One kernel runs PyTorch's CPU foreach kernel on every list: the CPU's bits, entry by entry
    (lists of mixed shapes, an empty tensor among them), and no fallback."""
    lists = [[special(shape, dtype) * k for shape in FOREACH_SHAPES] for k in (1, -1, 0.5)]
    on_device = [[t.to("openreg") for t in entries] for entries in lists]
    torch.openreg.reset_fallback_counts()
    FOREACH[name](*on_device)
    FOREACH[name](*lists)
    for got, expected in zip(on_device[0], lists[0]):
        bits_equal(got, expected)
    assert torch.openreg.fallback_counts() == {}


@pytest.mark.parametrize("name", FOREACH)
def test_foreach_short_paths_leave_other_cases_to_pytorch(name):
    """Integers, strided entries, mixed dtypes, lists of different lengths, wrong devices and an
    empty list: the CPU's results and the CPU's errors."""
    def run(*tensors):
        p, q, r = [list(tensors[i::3]) for i in range(3)]
        FOREACH[name](p, q, r)
        return torch.stack([t.double() for t in p])
    ints = torch.arange(1, 13).reshape(3, 4)
    strided = torch.randn(4, 3).t()
    same_outcome(run, ints, ints.flip(0), ints + 1)
    same_outcome(run, strided, torch.randn(3, 4), torch.rand(3, 4) + 1)
    same_outcome(run, torch.randn(3, 4), torch.randn(3, 4, dtype=torch.float64),
                 torch.rand(3, 4) + 1)
    same_outcome(run, torch.randn(2), torch.randn(2), torch.rand(2) + 1,
                 torch.randn(2), torch.randn(2), torch.rand(2) + 1)
    if name.endswith("(scalar)") or name == "_foreach_sqrt_":
        return
    a, b = torch.randn(3, device="openreg:0"), torch.randn(3, device="openreg:1")
    with pytest.raises(RuntimeError, match="same device|same number"):
        FOREACH[name]([a], [b], [b])
    with pytest.raises(RuntimeError, match="same number of tensors"):
        FOREACH[name]([a, a], [a], [a])
    with pytest.raises(RuntimeError, match="at least one tensor"):
        FOREACH[name]([], [], [])


def foreach_opinfo(name):
    from torch.testing._internal import common_methods_invocations as cmi
    dbs = (cmi.foreach_unary_op_db, cmi.foreach_binary_op_db, cmi.foreach_pointwise_op_db,
           cmi.foreach_other_op_db)
    return next(op for db in dbs for op in db if op.name == name)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", ["_foreach_add", "_foreach_mul", "_foreach_div", "_foreach_addcmul",
                                  "_foreach_addcdiv", "_foreach_lerp", "_foreach_sqrt"])
def test_foreach_opinfo_samples_match_the_cpu(name, dtype):
    """PyTorch's own foreach OpInfo samples (lists of one and five tensors; scalar, list, scalar
    list and tensor arguments) through the in-place forms: the CPU's values bit for bit, or the
    CPU's error."""
    op = foreach_opinfo(name)
    samples = list(op.sample_inputs("cpu", dtype, num_input_tensors=[1, 5]))
    assert samples
    for sample in samples:
        expected = [t.clone() for t in sample.input]
        got, args, kwargs = move_sample(sample, "openreg")
        try:
            op.inplace_variant(expected, *sample.args, **sample.kwargs)
        except RuntimeError as error:
            with pytest.raises(RuntimeError, match=re.escape(str(error).splitlines()[0][:40])):
                op.inplace_variant(got, *args, **kwargs)
                torch.openreg.synchronize()
            continue
        op.inplace_variant(got, *args, **kwargs)
        for g, e in zip(got, expected):
            torch.testing.assert_close(g.cpu(), e, rtol=0, atol=0, equal_nan=True)


OVERLAPPING_WRITES = {  # an output that overlaps an input in part, or itself
    "add_": lambda x: x[1:].add_(x[:-1]),
    "mul_ (raw kernel)": lambda x: x[1:].mul_(x[:-1]),
    "add out=": lambda x: torch.add(x[:-1], x[:-1], out=x[1:]),
    "addcmul_ (short path)": lambda x: x[1:].addcmul_(x[:-1], x[:-1]),
    "lerp_ (short path)": lambda x: x[1:].lerp_(x[:-1], 0.5),
    "_foreach_add_ (short path)": lambda x: torch._foreach_add_([x[1:]], [x[:-1]]),
    "copy_": lambda x: x[1:].copy_(x[:-1]),
    "copy_ into an expanded tensor": lambda x: x[:3].expand(2, 3).copy_(x[2:8].view(2, 3)),
    "sqrt out= (borrowed)": lambda x: torch.sqrt(x[:-1], out=x[1:]),
    "maximum out= (borrowed)": lambda x: torch.maximum(x[:-1], x[:-1], out=x[1:]),
    "add_ of itself (full overlap: allowed)": lambda x: x.add_(x),
    "mm out= (PyTorch does not check)": lambda x: torch.mm(x[:4].view(2, 2), x[:4].view(2, 2),
                                                           out=x[2:6].view(2, 2)),
}


@pytest.mark.parametrize("name", OVERLAPPING_WRITES)
def test_overlapping_writes_are_refused_as_on_the_cpu(name):
    """A kernel sees each device storage as one CPU storage, and the hand-written kernels check
    on the host: PyTorch's overlap errors, never a cascade of wrong values. Where PyTorch allows
    the write, the results match."""
    def run(x):
        OVERLAPPING_WRITES[name](x)
        return x
    same_outcome(run, torch.arange(8.0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool, torch.complex64],
                         ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_cat_and_stack_match_cpu(dtype, dim):
    parts = [rand((2, 3, 4), torch.float32).to(dtype) for _ in range(3)]
    catted = []  # sizes that differ along `dim` only
    for i in range(3):
        shape = [2, 3, 4]
        shape[dim] = 1 + i
        catted.append(rand(shape, torch.float32).to(dtype))
    devs = [p.to("openreg") for p in catted]
    bits_equal(torch.cat(devs, dim=dim), torch.cat(catted, dim=dim))
    bits_equal(torch.stack([p.to("openreg") for p in parts], dim=dim),
               torch.stack(parts, dim=dim))
    # Beyond the short path: mixed dtypes, a strided input, large inputs, legacy empty tensors.
    big = torch.randn(40000)
    wider = torch.complex128 if dtype.is_complex else torch.float64
    strided = parts[1].transpose(0, 1).contiguous().transpose(0, 1)
    for inputs in ([parts[0], parts[1].to(wider)], [parts[0], strided], [big, big],
                   [parts[0].reshape(-1), torch.empty(0, dtype=dtype)]):
        expected = torch.cat(inputs)
        got = torch.cat([t.to("openreg") for t in inputs])
        assert torch.equal(got.cpu(), expected) and got.dtype == expected.dtype
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.cat([devs[0], devs[1]], dim=3)
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        torch.stack(devs)
    with pytest.raises(RuntimeError, match="same device"):
        torch.cat([torch.ones(2, device="openreg:0"), torch.ones(2, device="openreg:1")])


@pytest.mark.parametrize("src", [torch.float32, torch.float16, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("dst", [torch.float16, torch.bfloat16, torch.float64, torch.int32],
                         ids=str)
def test_dtype_conversion_matches_cpu(src, dst):
    if src.is_floating_point:
        x = special((5, 7), torch.float32).to(src)
    else:
        x = rand((5, 7), torch.float32) > 0 if src == torch.bool else rand((5, 7), src)
    d = x.to("openreg")
    bits_equal(d.to(dst), x.to(dst))
    bits_equal(d.t().to(dst), x.t().to(dst))  # a strided tensor keeps its layout
    bits_equal(d[:, :1].to(dst), x[:, :1].to(dst))  # contiguous; a size-1 dimension's stride kept
    cl = torch.randn(2, 3, 4, 5).to(src)
    bits_equal(cl.to("openreg").to(dst, memory_format=torch.channels_last),
               cl.to(dst, memory_format=torch.channels_last))
    assert d.to(dst).cpu().dtype == dst and d.to(dtype=src) is d  # same dtype: no copy


def test_kernels_are_queued_not_run_inline():
    """The launch returns before the device runs the kernel; .cpu() waits for it."""
    x = torch.ones(1 << 22, device="openreg")
    for _ in range(20):
        x = x + 1
    assert x[-1].item() == 21.0


def test_device_kernels_example():
    """The chapter's example: a CNN and a transformer block train natively, zero fallbacks."""
    lines = run_example("device_kernels.py").splitlines()
    assert lines[0].startswith("CNN: loss cpu") and lines[0].endswith("parameters match: True")
    assert lines[1].startswith("transformer: loss cpu") and lines[1].endswith("parameters match: True")
    assert lines[2] == "no operator fell back to the CPU"
    cpu, dev = lines[0].split("cpu ")[1].split(" openreg ")
    assert abs(float(cpu) - float(dev.split(",")[0])) < 1e-5


def test_kernel_threads_example():
    """The chapter's listing: the host keeps one thread, the kernels get the cores."""
    lines = run_example("device_kernels_threads.py").splitlines()
    assert lines[0] == f"kernel threads: {os.cpu_count()} = cores: {os.cpu_count()}"
    assert lines[1] == "mean |x|: 0.8"


def test_kernel_threads_must_be_between_one_and_the_cores():
    assert torch.openreg.get_kernel_threads() == 1  # the default
    for bad in (0, -2):
        with pytest.raises(ValueError, match=f"at least one thread, got {bad}"):
            torch.openreg.set_kernel_threads(bad)
    cores = os.cpu_count()
    with pytest.raises(ValueError, match=f"at most {cores} threads .this machine's cores., got 1000"):
        torch.openreg.set_kernel_threads(1000)
    assert torch.openreg.get_kernel_threads() == 1  # refused values change nothing


KERNEL_THREADS_PROBE = """
import os, torch
def threads(): return len(os.listdir("/proc/self/task"))
torch.set_num_threads(2)  # what PyTorch sets on a thread's first parallel loop: must not win
x = torch.randn(1 << 20)
x.exp().sum()  # the host's own OpenMP threads start now, before counting
d = x.to("openreg"); torch.openreg.synchronize()
before = threads()
one = d.exp().sum().item()
after_one = threads()
torch.openreg.set_kernel_threads(2)
two = d.exp().sum().item()
print(torch.openreg.get_kernel_threads(), after_one - before, threads() - after_one,
      abs(one - two) <= 1e-3 * abs(one), abs(one - x.exp().sum().item()) <= 1e-3 * abs(one))
"""


def test_kernel_threads_decide_the_devices_openmp_threads():
    """With one kernel thread (the default) the device's worker starts no OpenMP thread beside
    the host's, even when torch.set_num_threads asked for more; with two it starts one. Both
    give the CPU's sums."""
    result = run_python(KERNEL_THREADS_PROBE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2", "0", "1", "True", "True"]


SMALL_KERNELS_PROBE = """
import os, torch
def threads(): return len(os.listdir("/proc/self/task"))
torch.set_num_threads(1)
torch.openreg.set_kernel_threads(2)
small = torch.randn(32, 32).to("openreg")  # copies: no kernel yet
large = torch.randn(512, 64).to("openreg")
torch.openreg.synchronize()
before = threads()
for _ in range(3):
    small.softmax(1).sum().item(); small.clone().zero_(); torch.openreg.synchronize()
after_small = threads()
y = large.softmax(1)
after_large = threads()
print(after_small - before, after_large - after_small,
      torch.allclose(y.cpu(), large.cpu().softmax(1)))
"""


def test_small_kernels_stay_on_one_thread():
    """With two kernel threads, kernels on fewer than 32,768 elements still run on the worker
    alone (PyTorch splits even a 32 x 32 softmax, and the CPU on two threads starts a thread
    for it); the first kernel on a larger tensor starts the worker's OpenMP thread."""
    result = run_python(SMALL_KERNELS_PROBE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "1", "True"]
    cpu = run_python("import os, torch\ntorch.set_num_threads(2)\n"
                     "n = len(os.listdir('/proc/self/task'))\ntorch.randn(32, 32).softmax(1)\n"
                     "print(len(os.listdir('/proc/self/task')) - n)")
    assert cpu.stdout.strip() == "1", "the probe's small softmax must be one PyTorch splits"


def test_seeded_random_numbers_do_not_depend_on_kernel_threads():
    """The random kernels split their work across the kernel's threads by position, not by
    thread: the same seed gives the same numbers on one thread or several."""
    result = run_python("""
import torch
draws = []
for threads in (1, 2):
    torch.openreg.set_kernel_threads(threads)
    torch.manual_seed(0)
    draws.append((torch.randn(1 << 20, device="openreg").cpu(),
                  torch.rand(300001, device="openreg").cpu(),
                  torch.nn.functional.dropout(torch.ones(1 << 20, device="openreg"), 0.3).cpu()))
print(all(torch.equal(a, b) for a, b in zip(*draws)))
""")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"

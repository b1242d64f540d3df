"""The hand-written kernels (add, sub, mul, div, mm, relu, the reductions' short paths, fill_,
zero_) agree with the CPU and check like it, on the host (docs/hand-written-kernels.md)."""

import contextlib
import re

import pytest
import torch
from conftest import rand, same_outcome, special



@contextlib.contextmanager
def cpu_on_kernel_threads():
    """The CPU on as many threads as the device's large kernels, so that a reduction over
    40,000 elements splits at the same places on both."""
    saved = torch.get_num_threads()
    torch.set_num_threads(torch.openreg.get_kernel_threads())
    try:
        yield
    finally:
        torch.set_num_threads(saved)

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
        with cpu_on_kernel_threads():  # the CPU's bits, split across as many threads
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
    ((7,), dict(dim=0)), ((), dict(dim=0)), ((3, 4), dict(dim=[])),
    ((3, 4), dict(dim=[], keepdim=True)), ((16, 64), dict(dim=0)), ((4, 5, 6), dict(dim=(0, 2))),
    ((0, 4), dict(dim=1)), ((4, 0), dict(dim=1)),
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
            with cpu_on_kernel_threads():
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
    with pytest.raises(RuntimeError,
                       match="result type Float can't be cast to the desired output type Long"):
        x.add_(torch.ones(3, device="openreg"))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        x.add_(torch.ones(2, 3, dtype=torch.int64, device="openreg"))
    with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
        torch.add(x, x, alpha=0.5)
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
        (torch.ones(2, dtype=torch.bool, device="openreg")
         - torch.ones(2, dtype=torch.bool, device="openreg"))
    assert torch.equal(x.cpu(), torch.ones(3, dtype=torch.int64))  # untouched


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.complex64],
                         ids=str)
def test_mm_matches_cpu(dtype):
    a = rand((7, 5), dtype) if not dtype.is_complex else torch.randn(7, 5, dtype=dtype)
    b = rand((5, 3), dtype) if not dtype.is_complex else torch.randn(5, 3, dtype=dtype)
    got = a.to("openreg") @ b.to("openreg")
    torch.testing.assert_close(got.cpu(), a @ b)
    out = torch.empty(0, dtype=dtype, device="openreg")
    torch.mm(a.to("openreg"), b.to("openreg"), out=out)
    torch.testing.assert_close(out.cpu(), a @ b)
    torch.testing.assert_close((a.to("openreg").t().contiguous().t() @ b.to("openreg")).cpu(),
                               a @ b)


def test_mm_errors():
    a = torch.ones(2, 3, device="openreg")
    with pytest.raises(RuntimeError,
                       match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"):
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


LAYOUTS = {  # module, input, dtype: the CPU picks oneDNN, or a slow path with its own layout
    "weight channels-last": (lambda: torch.nn.Conv2d(3, 4, 3).to(memory_format=torch.channels_last),
                             torch.contiguous_format, torch.float32),
    "input channels-last": (lambda: torch.nn.Conv2d(3, 4, 3), torch.channels_last, torch.float32),
    "float64 3-d": (lambda: torch.nn.Conv3d(3, 4, 3), torch.channels_last_3d, torch.float64),
    "transposed": (lambda: torch.nn.ConvTranspose2d(3, 4, 3), torch.channels_last, torch.float32),
}


@pytest.mark.parametrize("name", LAYOUTS)
def test_convolution_lays_out_results_as_the_cpu(name):
    make, input_format, dtype = LAYOUTS[name]
    torch.manual_seed(0)
    cpu = make().to(dtype)
    spatial = (6, 6, 6) if isinstance(cpu, torch.nn.Conv3d) else (8, 8)
    x = torch.randn(2, 3, *spatial, dtype=dtype).contiguous(memory_format=input_format)
    results = {}
    for where in ("cpu", "openreg"):
        module = cpu
        if where == "openreg":  # the same weights, in the same layout (.to keeps strides)
            module = make().to(dtype)
            module.load_state_dict(cpu.state_dict())
            module.to(where)
        xin = x.detach().to(where).requires_grad_()
        out = module(xin)
        out.sum().backward()
        results[where] = [out, xin.grad, module.weight.grad]
    for got, want in zip(results["openreg"], results["cpu"]):
        assert got.stride() == want.stride()
        torch.testing.assert_close(got.cpu(), want)


@pytest.mark.parametrize("factory", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("args", [(3, 3), (3, 3, 1), (4, 3, -1), (0, 3), (5, 2, -10)], ids=str)
def test_triangle_index_factories_match_the_cpu(factory, args):
    make = getattr(torch, factory)
    assert make(*args, device="openreg").cpu().equal(make(*args))
    assert make(*args, dtype=torch.int32, device="openreg").dtype == torch.int32
    with pytest.raises(RuntimeError, match="row must be non-negative"):
        make(-1, 3, device="openreg")


REDUCTIONS = {
    "argmax(dim=0)": lambda t: torch.argmax(t, dim=0), "argmax()": torch.argmax,
    "sum(-1)": lambda t: t.sum(-1), "sum()": torch.sum, "mean(-1)": lambda t: t.mean(-1),
    "mean()": torch.mean, "amax(-1)": lambda t: torch.amax(t, -1),
    "all()": lambda t: t.bool().all(), "norm()": torch.norm,
}


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_past_64_dimensions_raise_at_the_call_as_on_the_cpu(name):
    # The limit is checked inside PyTorch's CPU kernels: the short paths leave such tensors to
    # the borrowed kernel, whose first call runs that check before returning.
    x = torch.randn([1] * 65)
    outcomes = []
    for where in ("cpu", "openreg"):
        try:
            REDUCTIONS[name](x.to(where))
            outcomes.append("ok")
        except RuntimeError as e:
            outcomes.append(str(e))
        torch.openreg.synchronize()  # nothing left to fail later
    assert outcomes[0] == outcomes[1]

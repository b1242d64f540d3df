"""The borrowed path end to end: operators whose shapes depend on the data run on the device,
a plan is checked once against the CPU kernel, the remaining operators with a Meta kernel are
borrowed, and a user's first steps never fall back. Every result is compared with the CPU."""

import os
import subprocess
import sys
import warnings

import pytest
import torch
import torch.nn.functional as F

from conftest import ROOT

DTYPES = [torch.float32, torch.float64, torch.int64, torch.int32, torch.bool, torch.float16]


def make(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 3
    if dtype == torch.bool:
        return x > 0
    return x.to(dtype)


def no_fallback(fn):
    """fn() with the fallback counted: returns its result and asserts nothing fell back."""
    torch.openreg.reset_fallback_counts()
    result = fn()
    assert torch.openreg.fallback_counts() == {}, torch.openreg.fallback_counts()
    return result


def same(got, expected):
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            same(g, e)
        return
    assert got.device.type == "openreg", got.device
    torch.testing.assert_close(got.cpu(), expected, equal_nan=True)


DATA_DEPENDENT = {
    "nonzero": lambda x, m: torch.nonzero(x),
    "nonzero as_tuple": lambda x, m: torch.nonzero(x, as_tuple=True),
    "argwhere": lambda x, m: torch.argwhere(x),
    "masked_select": lambda x, m: torch.masked_select(x, m),
    "bool index": lambda x, m: x[m],
    "bool index, rows": lambda x, m: x[m[:, 0]],
    "unique": lambda x, m: torch.unique(x),
    "unique sorted counts": lambda x, m: torch.unique(x, return_inverse=True, return_counts=True),
    "unique dim": lambda x, m: torch.unique(x, dim=0),
    "unique_consecutive": lambda x, m: torch.unique_consecutive(x, return_counts=True),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (5, 7), (33, 4)], ids=str)
@pytest.mark.parametrize("name", DATA_DEPENDENT)
def test_data_dependent_ops_run_on_the_device(name, shape, dtype):
    x, m = make(shape, dtype), make(shape, torch.bool, seed=1)
    if dtype == torch.float16 and name.startswith("unique"):
        pytest.skip("the CPU has no unique for float16 either")
    expected = DATA_DEPENDENT[name](x, m)
    got = no_fallback(lambda: DATA_DEPENDENT[name](x.to("openreg"), m.to("openreg")))
    same(got, expected)


def test_boolean_mask_assignment_and_out_forms():
    x, m = make((6, 5), torch.float32), make((6, 5), torch.bool, seed=1)
    d = x.to("openreg")
    no_fallback(lambda: d.__setitem__(d > 1, 0.0))
    x[x > 1] = 0.0
    same(d, x)
    out = torch.empty(0, device="openreg")
    no_fallback(lambda: torch.masked_select(d, m.to("openreg"), out=out))
    same(out, torch.masked_select(x, m))
    idx = torch.empty(0, dtype=torch.long, device="openreg")
    no_fallback(lambda: torch.nonzero(d, out=idx))
    same(idx, torch.nonzero(x))


def test_printing_a_tensor_falls_back_on_nothing():
    script = ("import warnings, torch; warnings.simplefilter('error');"
              "print(torch.tensor([1., 2.], device='openreg'));"
              "print(torch.randn(3, 4, device='openreg') > 0);"
              "print(torch.arange(5, device='openreg').float() / 3);"
              "print(torch.tensor([float('nan'), 1e20, -3.], device='openreg'));"
              "print(torch.openreg.fallback_counts())")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "Warning" not in result.stderr, result.stderr
    assert result.stdout.strip().endswith("{}"), result.stdout


def test_batch_norm_eval_results_have_the_cpu_shapes():
    """The Meta kernel says save_mean/save_invstd have shape [C] in eval mode; the CPU kernel
    returns them empty. The borrowed path checks a new plan against the CPU kernel."""
    x = make((2, 3, 4, 4), torch.float32)
    mean, var = torch.rand(3), torch.rand(3) + 0.5
    w, b = torch.rand(3), torch.rand(3)
    d = [t.to("openreg") for t in (x, w, b, mean, var)]
    for _ in range(2):  # the first call checks the plan, the second uses it
        expected = torch.ops.aten.native_batch_norm(x, w, b, mean, var, False, 0.1, 1e-5)
        got = torch.ops.aten.native_batch_norm(*d, False, 0.1, 1e-5)
        assert [tuple(t.shape) for t in got] == [tuple(t.shape) for t in expected]
        same(got, expected)
        expected = torch.ops.aten._native_batch_norm_legit(x, w, b, mean, var, False, 0.1, 1e-5)
        got = torch.ops.aten._native_batch_norm_legit(*d, False, 0.1, 1e-5)
        same(got, expected)


REMAINING = {  # operators borrowed by borrow_remaining_operators, not listed by hand
    "frac": lambda x: torch.frac(x), "sinc": lambda x: torch.sinc(x),
    "logit": lambda x: torch.logit(x.abs().clamp(0.1, 0.9)), "deg2rad": lambda x: torch.deg2rad(x),
    "heaviside": lambda x: torch.heaviside(x, x.flip(0)), "hypot": lambda x: torch.hypot(x, x),
    "xlogy": lambda x: torch.xlogy(x.abs(), x.abs()), "kthvalue": lambda x: torch.kthvalue(x, 2, 0),
    "median dim": lambda x: torch.median(x, 0), "mode": lambda x: torch.mode(x, 0),
    "searchsorted": lambda x: torch.searchsorted(x.flatten().sort()[0], x),
    "renorm": lambda x: torch.renorm(x, 2, 0, 1.0), "polar": lambda x: torch.polar(x.abs(), x),
    "upsample_nearest2d": lambda x: torch.nn.functional.interpolate(x[None, None], scale_factor=2),
    "reflection_pad2d": lambda x: torch.nn.functional.pad(x[None], (1, 1, 1, 1), mode="reflect"),
    "glu": lambda x: torch.nn.functional.glu(x, 0),
    "softshrink": lambda x: torch.nn.functional.softshrink(x),
    # no Meta kernel: run and waited for
    "equal": lambda x: torch.tensor(torch.equal(x, x.clone()), device=x.device),
    "cummin": lambda x: torch.cummin(x, 1), "logcumsumexp": lambda x: torch.logcumsumexp(x, 1),
    "histogram": lambda x: torch.histogram(x, 5),
    "_aminmax": lambda x: torch._aminmax(x, 1),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name", REMAINING)
def test_remaining_operators_are_borrowed(name, dtype):
    x = make((4, 6), dtype)
    same(no_fallback(lambda: REMAINING[name](x.to("openreg"))), REMAINING[name](x))


HOT = {  # operators with kernels of their own for speed: every dtype they take, odd shapes
    "relu": torch.relu, "sum": torch.sum, "sum dim": lambda x: x.sum(1),
    "amax": lambda x: x.amax(1), "argmax": lambda x: x.argmax(), "clamp": lambda x: x.clamp(-1, 1),
    "where": lambda x: torch.where(x > 0, x, -x), "cat": lambda x: torch.cat([x, x, x[:1]]),
    "index_select": lambda x: x.index_select(0, torch.tensor([x.shape[0] - 1, 0, 0],
                                                             device=x.device)),
    "cumsum": lambda x: x.cumsum(1), "pow": lambda x: x.pow(2), "mean": lambda x: x.mean(),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32], ids=str)
@pytest.mark.parametrize("shape", [(3, 1), (5, 7), (64, 33)], ids=str)
@pytest.mark.parametrize("name", HOT)
def test_hot_operators_match_the_cpu(name, shape, dtype):
    x = make(shape, dtype)
    if name in ("mean",) and not dtype.is_floating_point:
        pytest.skip("mean of integers is an error on the CPU too")
    same(no_fallback(lambda: HOT[name](x.to("openreg"))), HOT[name](x))
    t = x.to("openreg").t()  # a non-contiguous input
    same(no_fallback(lambda: HOT[name](t)), HOT[name](x.t()))


def test_a_users_first_steps_never_fall_back():
    """The quick start's first minutes: creating, printing, indexing, reducing, a model step."""
    script = ROOT / "benchmarks" / "ops.py"
    assert script.exists()
    torch.openreg.reset_fallback_counts()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = torch.randn(8, 4, device="openreg")
        repr(x), repr(x > 0), repr(x.sum()), repr(x.mean(0)), repr(x.max(1))
        x[x > 0].sum(), x[:, 1:3].abs().argmax(), x.unique(), torch.nonzero(x > 1)
        model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
        model.to("openreg")
        opt = torch.optim.Adam(model.parameters())
        loss = torch.nn.functional.cross_entropy(model(x),
                                                 torch.randint(0, 3, (8,), device="openreg"))
        loss.backward()
        opt.step()
        print(loss.item(), model[0].weight.grad.norm())
    assert torch.openreg.fallback_counts() == {}


def test_nonzero_and_masked_select_count_wait_once_and_write_on_the_device():
    """Their own kernels: counted on the device, allocated at size, written there, in stream
    order with the work queued before them; PyTorch's errors; refused inside a graph capture."""
    torch.manual_seed(0)
    x = torch.randn(300, 200)
    d = x.to("openreg")
    d.mul_(-1)  # queued before nonzero: nonzero must see it
    got = torch.nonzero(d > 0.5)
    assert got.device.type == "openreg" and got.dtype == torch.int64
    assert torch.equal(got.cpu(), torch.nonzero(-x > 0.5))
    assert torch.nonzero(torch.zeros(5, 5, device="openreg")).shape == (0, 2)
    assert torch.nonzero(torch.tensor(3.0, device="openreg")).shape == (1, 0)
    mask = torch.rand(2, 300, 1) > 0.3  # broadcast against x
    got = d.masked_select(mask.to("openreg"))
    assert torch.equal(got.cpu(), (-x).masked_select(mask))
    with pytest.raises(RuntimeError, match="expected BoolTensor for mask"):
        d.masked_select(d > 0).masked_select(torch.ones(1, device="openreg"))
    with pytest.raises(RuntimeError, match="must match the size"):
        d.masked_select(torch.ones(7, dtype=torch.bool, device="openreg"))
    s = torch.Stream(device="openreg")
    for op in (lambda: torch.nonzero(d), lambda: d.masked_select(d > 0)):
        with pytest.raises(RuntimeError, match="shapes depend on the data"):
            with s, torch.accelerator.Graph():
                op()


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool, torch.bfloat16,
                                   torch.complex64], ids=str)
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32], ids=str)
def test_integer_index_picks_rows_on_the_device(dtype, index_dtype):
    """x[idx] with one integer index tensor and index_select along dimension 0 copy whole rows
    in a kernel of their own (negative indices count from the end in x[idx]; index_select refuses
    them, as on the CPU); the other forms (x[:, idx], strided tensors, index_select along another
    dimension) keep PyTorch's kernels. Every result is the CPU's, nothing falls back."""
    g = torch.Generator().manual_seed(2)
    x = (torch.randn(40, 3, 5, generator=g) * 5).to(dtype) if dtype != torch.bool else (
        torch.randn(40, 3, 5, generator=g) > 0)
    d = x.flip(0).to("openreg").flip(0)  # a kernel queued before the gathers: they must see it
    shapes = [(7,), (2, 3, 4), (0,), ()]
    for shape in shapes:
        idx = torch.randint(-40, 40, shape, generator=g, dtype=torch.int64).to(index_dtype)
        cases = [(lambda: d[idx.to("openreg")], x[idx]), (lambda: d[idx], x[idx]),  # a CPU index
                 (lambda: d[:, idx.remainder(3).to("openreg")], x[:, idx.remainder(3)]),
                 (lambda: d.transpose(0, 2)[idx.remainder(5).to("openreg")],
                  x.transpose(0, 2)[idx.remainder(5)])]
        if len(shape) == 1:
            pos = idx.remainder(40).to("openreg")
            cases += [(lambda: d.index_select(0, pos), x.index_select(0, pos.cpu())),
                      (lambda: d.index_select(-1, pos.remainder(5)),
                       x.index_select(-1, pos.remainder(5).cpu()))]
        for fn, expected in cases:
            got = no_fallback(fn)
            assert got.device.type == "openreg" and got.shape == expected.shape
            assert got.dtype == expected.dtype and torch.equal(got.cpu(), expected)
    big = torch.arange(40 * 1024.0).view(40 * 256, 4)  # more rows than one piece: kernel threads
    rows = torch.randint(0, 40 * 256, (40 * 256,), generator=g)
    assert torch.equal(big.to("openreg")[rows.to("openreg")].cpu(), big[rows])
    for bad, op in (([40], lambda i: d[i]), ([-41], lambda i: d[i]),
                    ([-1], lambda i: d.index_select(0, i))):
        with pytest.raises(RuntimeError, match=f"index {bad[0]} is out of bounds for dimension 0 "
                                               "with size 40"):
            op(torch.tensor(bad, dtype=index_dtype, device="openreg"))
            torch.openreg.synchronize()


def test_integer_index_keeps_autograd_and_needs_no_meta_kernel():
    """Gradients flow through x[idx] and embedding (index_select) as on the CPU, and the first
    x[idx] does not run PyTorch's Meta kernel for index, a Python function that imports SymPy."""
    w = torch.randn(10, 4, requires_grad=True)
    wd = w.detach().to("openreg").requires_grad_()
    i = torch.tensor([[1, 2, 2], [9, 0, -1]])
    (w[i] * 2).sum().backward()
    (wd[i.to("openreg")] * 2).sum().backward()
    assert torch.equal(wd.grad.cpu(), w.grad)
    w.grad, wd.grad = None, None
    torch.nn.functional.embedding(i.remainder(10), w).pow(2).sum().backward()
    torch.nn.functional.embedding(i.remainder(10).to("openreg"), wd).pow(2).sum().backward()
    assert torch.allclose(wd.grad.cpu(), w.grad)
    code = ("import sys, torch, torch_openreg\n"
            "x = torch.randn(8, 3, device='openreg')\n"
            "y = x[torch.tensor([3, -1], device='openreg')]\n"
            "print(tuple(y.shape), 'sympy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["(2,", "3)", "False"]


def test_index_assignment_takes_cpu_indices():
    """x[idx] = v with index tensors on the CPU, as CUDA takes them: integer and boolean indices,
    several of them, accumulation, a 0-dim CPU value; a CPU value with dimensions is PyTorch's
    device error. Every result is the CPU's, nothing falls back."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(6, 4, generator=g)
    rows, cols = torch.tensor([4, 0, -1]), torch.tensor([1, 3, 2])
    mask = torch.tensor([True, False, True, False, False, True])

    def assignments(t):
        t[rows] = 2.0
        t[rows, cols] = torch.tensor(-1.0)  # a 0-dim CPU value
        t[:, cols] = torch.arange(18.0).view(6, 3).to(t.device)
        t[mask] = torch.full((4,), 7.0).to(t.device)
        t.index_put_((torch.tensor([1, 1, 2]),), torch.ones(3, 4).to(t.device), accumulate=True)
        return t.index_put((cols,), torch.tensor(3.0))

    d, c = x.to("openreg"), x.clone()
    got, expected = no_fallback(lambda: assignments(d)), assignments(c)
    assert got.device.type == "openreg"
    assert torch.equal(got.cpu(), expected) and torch.equal(d.cpu(), c)  # and the in-place ones
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        d.index_put_((rows,), torch.ones(3, 4))


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int64, torch.float32,
                                   torch.float16, torch.bfloat16, torch.complex64], ids=str)
@pytest.mark.parametrize("shape", [(1000,), (3, 300), (2, 3, 50, 7), (2,) * 9, ()], ids=str)
def test_raw_scans_match_the_cpu(shape, dtype):
    """The raw count and write loops (contiguous, real dtypes, 1 to 8 dimensions, blocks of 256
    selected elements flushed as they fill) and PyTorch's kernels for the rest (complex, 0-dim,
    9 dimensions, strided views) give the CPU's indices and values."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(shape, generator=g)
    x[x.abs() < 0.4] = 0.0
    if x.numel() > 3:
        x.view(-1)[:3] = torch.tensor([float("nan"), -0.0, float("inf")])
    x = x > 0 if dtype == torch.bool else x.to(dtype)
    mask = torch.rand(shape, generator=g) > 0.5
    d, dm = x.to("openreg"), mask.to("openreg")
    views = [(x, d, mask, dm)]
    if x.dim() >= 2:
        views.append(tuple(t.transpose(0, 1) for t in (x, d, mask, dm)))
    for cx, dx, cm, dmask in views:
        assert torch.equal(no_fallback(lambda: torch.nonzero(dx)).cpu(), torch.nonzero(cx))
        for got, expected in ((no_fallback(lambda: dx.masked_select(dmask)), cx.masked_select(cm)),
                              (no_fallback(lambda: dx[dmask]), cx[cm])):
            assert got.dtype == expected.dtype and got.shape == expected.shape
            assert torch.equal(got.cpu().view(torch.uint8), expected.view(torch.uint8))  # bits


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("shape", [(1,), (7,), (5, 7), (3, 4097), (300, 200)], ids=str)
def test_mse_loss_sums_squares_in_one_pass(shape, dtype):
    """F.mse_loss with a mean or a sum: one pass over both tensors (several blocks and the
    kernel threads for the larger shapes), close to the CPU's result and to the exact sum,
    the same bits on one kernel thread or two; NaN propagates; gradients are the CPU's."""
    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(shape, generator=g).to(dtype), torch.randn(shape, generator=g).to(dtype)
    dx, dy = x.to("openreg"), y.to("openreg")
    exact_sum = ((x.double() - y.double()) ** 2).sum()
    for reduction, exact in (("mean", exact_sum / x.numel()), ("sum", exact_sum)):
        got = no_fallback(lambda: F.mse_loss(dx, dy, reduction=reduction))
        same(got, F.mse_loss(x, y, reduction=reduction))
        assert got.shape == () and got.dtype == dtype
        # Within a float32 rounding or two of the exact value (the CPU's own is as far).
        assert abs(got.cpu().double() - exact) <= 1.2e-7 * exact
        threads = torch.openreg.get_kernel_threads()
        torch.openreg.set_kernel_threads(1 if threads > 1 else min(2, os.cpu_count() or 1))
        try:
            again = F.mse_loss(dx, dy, reduction=reduction)
        finally:
            torch.openreg.set_kernel_threads(threads)
        assert torch.equal(again.cpu(), got.cpu())
    nan = dx.clone()
    nan.view(-1)[-1] = float("nan")
    assert F.mse_loss(nan, dy).isnan().item()
    xr = x.clone().requires_grad_()
    dxr = dx.clone().requires_grad_()
    F.mse_loss(xr, y).backward()
    F.mse_loss(dxr, dy).backward()
    torch.testing.assert_close(dxr.grad.cpu(), xr.grad)


def test_mse_loss_other_forms_keep_pytorchs_kernel():
    """No reduction, broadcasting, mixed or half dtypes, strided and empty inputs give the CPU's
    results (PyTorch's kernel, borrowed), and a tensor on another device PyTorch's error."""
    g = torch.Generator().manual_seed(4)
    x, y = torch.randn(6, 5, generator=g), torch.randn(6, 5, generator=g)
    dx, dy = x.to("openreg"), y.to("openreg")
    cases = [(lambda a, b: F.mse_loss(a, b, reduction="none"), x, y),
             (lambda a, b: F.mse_loss(a, b), x.half(), y.half()),
             (lambda a, b: F.mse_loss(a, b), x, y.double()),
             (lambda a, b: F.mse_loss(a.t(), b.t(), reduction="sum"), x, y),
             (lambda a, b: F.mse_loss(a, b), x[:0], y[:0])]
    for fn, a, b in cases:
        same(no_fallback(lambda: fn(a.to("openreg"), b.to("openreg"))), fn(a, b))
    with pytest.warns(UserWarning, match="different to the input size"):
        same(F.mse_loss(dx, dy[:1]), F.mse_loss(x, y[:1]))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        F.mse_loss(dx, y)


@pytest.mark.parametrize("n", [0, 1, 7, 1024, 200_000], ids=str)
def test_all_and_any_of_a_mask_run_on_the_device(n):
    """torch.all and torch.any of a contiguous bool tensor: a kernel of their own (several chunks
    and the kernel threads for the largest), one False or True at the start, middle or end;
    other dtypes and strided masks keep PyTorch's kernels. Every result is the CPU's."""
    cases = [torch.ones(n, dtype=torch.bool), torch.zeros(n, dtype=torch.bool)]
    for where in {0, n // 2, n - 1} if n else ():
        flipped = torch.ones(n, dtype=torch.bool)
        flipped[where] = False
        cases += [flipped, ~flipped]
    for mask in cases:
        d = mask.to("openreg")
        for op in (torch.all, torch.any):
            got = no_fallback(lambda: op(d))
            assert got.dtype == torch.bool and got.shape == () and got.device.type == "openreg"
            assert got.item() == op(mask).item()
    g = torch.Generator().manual_seed(6)
    x = torch.randn(max(n, 2), 3, generator=g)
    x[0, 0] = 0.0
    for cx in (x, x.t(), (x > 0).t(), x.to(torch.int64)):
        for op in (torch.all, torch.any, lambda t: t.all(0), lambda t: t.any(-1)):
            same(no_fallback(lambda: op(cx.to("openreg"))), op(cx))


def bits_equal(got, expected):
    """Same dtype, shape, NaNs, and every other value with the same bits (the sign of zero too)."""
    got = got.cpu()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if expected.dtype == torch.bool:
        assert torch.equal(got, expected)
        return
    nan = torch.isnan(expected)
    assert torch.equal(torch.isnan(got), nan)
    as_int = torch.int32 if expected.dtype == torch.float32 else torch.int64
    assert torch.equal(got[~nan].view(as_int), expected[~nan].view(as_int))


COMPARISONS = [torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("n", [1, 9, 1024, 32767, 32768], ids=str)
def test_exact_operators_loop_on_small_floats(n, dtype):
    """neg, abs and the comparisons of fewer than 32,768 floats run a loop of their own (32,768
    keeps PyTorch's kernel): NaN, infinities, signed zeros, equal operands and scalars that a
    float cannot hold (1e300 is inf, as on the CPU) give the CPU's bits."""
    g = torch.Generator().manual_seed(n)
    a, b = torch.randn(n, generator=g, dtype=dtype), torch.randn(n, generator=g, dtype=dtype)
    a[::3] = b[::3]
    if n >= 9:
        a[1], b[2], a[4] = float("nan"), float("nan"), float("inf")
        a[5], b[5], a[6], b[6] = 0.0, -0.0, -0.0, 0.0
    da, db = a.to("openreg"), b.to("openreg")
    for op in (torch.neg, torch.abs):
        bits_equal(no_fallback(lambda: op(da)), op(a))
    for op in COMPARISONS:
        bits_equal(no_fallback(lambda: op(da, db)), op(a, b))
        for s in (0, 0.1, -1, True, 1e300, -1e300, 2**62 + 1, float("nan"), float("inf")):
            bits_equal(no_fallback(lambda: op(da, s)), op(a, s))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.eq(da, b)


def test_exact_operators_leave_other_forms_to_pytorch():
    """Strided, integer, half and broadcast operands, and an unsigned 64-bit scalar, keep
    PyTorch's kernels: same results as the CPU, nothing falls back."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(40, 30, generator=g)
    cases = [(x.t(), x.t() * 0.5), (x[:, ::2], x[:, 1::2]), (x.half(), x.half() * 2),
             (x.to(torch.int64), x.to(torch.int64) + 1), (x, x[:1] * 0.5)]
    for a, b in cases:
        for op in COMPARISONS + [torch.maximum, torch.minimum]:
            same(no_fallback(lambda: op(a.to("openreg"), b.to("openreg"))), op(a, b))
        for op in (torch.neg, torch.abs):
            same(no_fallback(lambda: op(a.to("openreg"))), op(a))
    same(no_fallback(lambda: x.to("openreg") < 2**63), x < 2**63)


LAYOUTS = {
    "contiguous": lambda t: t,
    "channels_last": lambda t: t.contiguous(memory_format=torch.channels_last),
    "transposed": lambda t: t.transpose(1, 3),
    "chunk": lambda t: t.chunk(2, 3)[1],
    "step": lambda t: t[..., ::2],
}
ELEMENTWISE = {
    "neg": torch.neg, "abs": torch.abs, "sigmoid": torch.sigmoid, "silu": F.silu,
    "relu": torch.relu, "exp": torch.exp, "pow": lambda t: t.pow(2), "> 0": lambda t: t > 0,
    "+ 1": lambda t: t + 1, "* 2": lambda t: t * 2,
}
ELEMENTWISE2 = {"add": torch.add, "mul": torch.mul, "sub": torch.sub, "div": torch.div,
                "maximum": torch.maximum, "eq": torch.eq}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_elementwise_results_keep_the_cpus_layout(layout):
    """An elementwise result is laid out as the CPU lays it out: a channels_last or transposed
    input gives a result in the same order (the hand-written add, mul, relu gave a contiguous
    one), a slice (an LSTM's gates, chunks of one matrix) a contiguous one. Same values too."""
    g = torch.Generator().manual_seed(4)
    base = torch.randn(2, 3, 4, 6, generator=g)
    x, dx = LAYOUTS[layout](base), LAYOUTS[layout](base.to("openreg"))
    for name, op in ELEMENTWISE.items():
        got, expected = no_fallback(lambda: op(dx)), op(x)
        assert got.stride() == expected.stride(), name
        same(got, expected)
    row = torch.randn(x.shape[-1], generator=g)
    for other_layout in LAYOUTS.values():
        y = other_layout(base * 0.5)
        if y.shape != x.shape:
            continue
        dy = other_layout((base * 0.5).to("openreg"))
        for a, b, da, db in ((x, y, dx, dy), (row, x, row.to("openreg"), dx)):
            for name, op in ELEMENTWISE2.items():
                got, expected = no_fallback(lambda: op(da, db)), op(a, b)
                assert got.stride() == expected.stride(), name
                same(got, expected)


def test_results_take_tensoriterators_layout_in_its_corner_cases():
    """The layouts PyTorch's own test_torch.py checks: a (N, C, 1, 1) channels_last operand keeps
    its size-1 strides, a chunk of a channels_last tensor gives a channels_last result, and a
    resized out= of a hand-written (add) or borrowed (exp) operator is laid out as a new result."""
    ambiguous = torch.rand(10, 3, 1, 1).contiguous(memory_format=torch.channels_last)
    bias = torch.rand(3, 1, 1)
    cl = torch.randn(2, 4, 3, 3).contiguous(memory_format=torch.channels_last)
    permuted = torch.randn(4, 5, 6).permute(2, 0, 1)
    cases = {
        "size-1 strides": lambda t: t["ambiguous"] + t["bias"],
        "size-1 strides, bias first": lambda t: t["bias"] + t["ambiguous"],
        "chunks of channels_last": lambda t: torch.add(*t["cl"].chunk(2, dim=1)),
        "add out= resized": lambda t: torch.add(t["permuted"], t["permuted"],
                                                out=t["permuted"].new_empty(0)),
        "exp out= resized": lambda t: torch.exp(t["permuted"], out=t["permuted"].new_empty(0)),
    }
    tensors = {"ambiguous": ambiguous, "bias": bias, "cl": cl, "permuted": permuted}
    on_device = {name: t.to("openreg") for name, t in tensors.items()}
    for name, case in cases.items():
        for _ in range(2):  # the borrowed path's first call and its cached plan
            got, expected = case(on_device), case(tensors)
            assert got.stride() == expected.stride(), name
            same(got, expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64,
                                   torch.int8, torch.bool, torch.complex64], ids=str)
def test_gather_copies_elements_in_a_loop(dtype):
    """gather of contiguous tensors with an int64 index of self's shape (but along dim), fewer
    than 32,768 elements: a loop of its own for every element size; picking more elements than
    the dimension holds, negative dims, one-element dimensions. Results and gradients are the
    CPU's; other forms (a smaller or strided index, an int32 one) keep PyTorch's kernel and
    its errors."""
    g = torch.Generator().manual_seed(7)
    for shape, dim in (((16, 64), 1), ((16, 64), 0), ((3, 4, 5), 1), ((3, 4, 5), -1), ((7,), 0),
                       ((2, 1, 3), 2), ((40, 1000), 1)):
        x = (torch.randn(shape, generator=g) * 5).to(dtype)
        for picks in (1, shape[dim], shape[dim] + 3):
            sizes = list(shape)
            sizes[dim] = picks
            idx = torch.randint(0, shape[dim], sizes, generator=g)
            same(no_fallback(lambda: x.to("openreg").gather(dim, idx.to("openreg"))),
                 x.gather(dim, idx))
    x = torch.randn(6, 5, generator=g)
    for idx in (torch.tensor([[0, 4], [1, 1]]),          # smaller than self along dim 0
                torch.randint(0, 5, (5, 6), generator=g).t()):  # strided
        same(no_fallback(lambda: x.to("openreg").gather(1, idx.to("openreg"))), x.gather(1, idx))
    idx32 = torch.randint(0, 5, (6, 5), generator=g, dtype=torch.int32)  # PyTorch's kernel
    same(no_fallback(lambda: x.to("openreg").gather(1, idx32.to("openreg"))), x.gather(1, idx32))
    with pytest.raises(RuntimeError, match="same number of dimensions"):  # PyTorch's error
        x.to("openreg").gather(1, torch.zeros(6, 5, 3, dtype=torch.int64, device="openreg"))
    dx = x.to("openreg").requires_grad_()
    cx = x.clone().requires_grad_()
    idx = torch.randint(0, 5, (6, 3), generator=g)
    dx.gather(1, idx.to("openreg")).pow(2).sum().backward()
    cx.gather(1, idx).pow(2).sum().backward()
    same(dx.grad, cx.grad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_index_put_accumulate_sums_rows_in_a_loop(dtype):
    """index_put_ with accumulate=True, one 1-D int64 index and values of the picked rows'
    shape, fewer than 32,768 elements: a loop of its own. Rows picked several times (and by
    negative indices) get the CPU's bits; results, in-place and out-of-place, and gradients are
    the CPU's; other forms keep PyTorch's kernel and its errors."""
    g = torch.Generator().manual_seed(11)
    for shape in ((16, 64), (5,), (7, 3, 4), (1, 1), (40, 200)):  # v: up to 24,000 elements
        x = torch.randn(shape, generator=g, dtype=dtype)
        n = shape[0]
        for picks in (0, 1, n, 3 * n):
            idx = torch.randint(-n, n, (picks,), generator=g)
            v = torch.randn((picks,) + shape[1:], generator=g, dtype=dtype) * 3
            expected = x.clone().index_put_((idx,), v, accumulate=True)
            got = x.to("openreg")
            no_fallback(lambda: got.index_put_((idx.to("openreg"),), v.to("openreg"),
                                               accumulate=True))
            bits_equal(got, expected)
            got = no_fallback(lambda: torch.index_put(x.to("openreg"), (idx,), v.to("openreg"),
                                                      accumulate=True))  # a CPU index too
            bits_equal(got, expected)
    # Past the loop's size, PyTorch's kernel; the CPU's sums then run on several threads, in
    # no fixed order: the same values, not the same bits.
    x = torch.randn(8, 5000, generator=g, dtype=dtype)
    idx = torch.randint(0, 8, (8,), generator=g)
    v = torch.randn(8, 5000, generator=g, dtype=dtype)
    got = x.to("openreg")
    no_fallback(lambda: got.index_put_((idx.to("openreg"),), v.to("openreg"), accumulate=True))
    same(got, x.clone().index_put_((idx,), v, accumulate=True))
    x = torch.randn(6, 5, generator=g, dtype=dtype)
    idx = torch.tensor([0, 5, 0, -1])
    v = torch.randn(4, 5, generator=g, dtype=dtype)
    for args in (((idx,), v, False),                            # no accumulate
                 ((idx,), v[0], True),                          # a broadcast value
                 ((idx.int(),), v, True),                       # an int32 index
                 ((idx, torch.tensor([1, 2, 3, 4])), v[:, 0], True),  # two indices
                 ((torch.tensor([True, False] * 3),), v[:3], True)):  # a mask
        got = x.to("openreg")
        device_args = tuple(i.to("openreg") for i in args[0]), args[1].to("openreg"), args[2]
        no_fallback(lambda: got.index_put_(*device_args))
        bits_equal(got, x.clone().index_put_(*args))
    # PyTorch's errors: a dtype its kernel refuses (by the next synchronize, as every error of
    # the borrowed kernel that its Meta kernel does not check), a value sharing self's memory.
    with pytest.raises(RuntimeError, match="dtypes match"):
        x.to("openreg").index_put_((idx.to("openreg"),), v.to("openreg", torch.float16), True)
        torch.openreg.synchronize()
    shared = x.to("openreg")
    with pytest.raises(RuntimeError, match="single memory location"):
        shared.index_put_((torch.tensor([0, 1], device="openreg"),), shared[2:4], True)
        torch.openreg.synchronize()
    dx = x.to("openreg").requires_grad_()
    dv = v.to("openreg").requires_grad_()
    cx = x.clone().requires_grad_()
    cv = v.clone().requires_grad_()
    torch.index_put(dx * 2, (idx.to("openreg"),), dv, accumulate=True).pow(2).sum().backward()
    torch.index_put(cx * 2, (idx,), cv, accumulate=True).pow(2).sum().backward()
    same(dx.grad, cx.grad)
    same(dv.grad, cv.grad)


@pytest.mark.parametrize("bad", [4, -5])
def test_index_put_accumulate_index_out_of_range_fails_the_kernel(bad):
    """An index out of range fails the device's kernel with the CPU's message, reported by the
    next synchronize; the rows before it are summed, as on the CPU, and the stream runs on."""
    x = torch.zeros(4, 2, device="openreg")
    with pytest.raises(RuntimeError,
                       match=f"index {bad} is out of bounds for dimension 0 with size 4"):
        x.index_put_((torch.tensor([1, bad, 2], device="openreg"),),
                     torch.ones(3, 2, device="openreg"), accumulate=True)
        torch.openreg.synchronize()
    same(x, torch.tensor([[0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]))


@pytest.mark.parametrize("bad", [5, -1])
def test_gather_index_out_of_range_fails_the_kernel(bad):
    """An index out of range fails the device's kernel with the CPU's message, reported by the
    next synchronize; the stream then runs the next work."""
    x = torch.randn(4, 5, device="openreg")
    with pytest.raises(RuntimeError,
                       match=f"index {bad} is out of bounds for dimension 1 with size 5"):
        x.gather(1, torch.tensor([[0, bad]], device="openreg"))
        torch.openreg.synchronize()
    same(x.gather(1, torch.tensor([[0, 4]], device="openreg")),
         x.cpu().gather(1, torch.tensor([[0, 4]])))

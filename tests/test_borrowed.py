"""Borrowed kernels (PyTorch's CPU kernels on device memory) across many operators, against the
CPU: functional, in-place and out= forms, broadcasting, errors raised at the call."""

import pytest
import torch

from torch_openreg.openreg.testing.compare import cpu_threads_of_kernels

F = torch.nn.functional
torch.manual_seed(0)
A, B = torch.randn(4, 6), torch.randn(4, 6)
POS = torch.rand(4, 6) + 0.1
IDX = torch.tensor([[0, 2], [1, 5], [3, 3], [5, 0]])

FUNCTIONAL = {
    "exp": lambda a, b: torch.exp(a), "log": lambda a, b: torch.log(a.abs() + 1),
    "sqrt": lambda a, b: torch.sqrt(a.abs()), "sigmoid": lambda a, b: torch.sigmoid(a),
    "pow": lambda a, b: torch.pow(a.abs(), b), "maximum": lambda a, b: torch.maximum(a, b),
    "where": lambda a, b: torch.where(a > 0, a, b), "clamp": lambda a, b: a.clamp(-0.5, 0.5),
    "eq": lambda a, b: a > b, "sum dim": lambda a, b: a.sum(1, keepdim=True),
    "mean": lambda a, b: a.mean(0), "amax": lambda a, b: a.amax(1),
    "max dim": lambda a, b: a.max(1)[1], "argmin": lambda a, b: a.argmin(),
    "var": lambda a, b: a.var(1), "norm": lambda a, b: a.norm(dim=1),
    "cumsum": lambda a, b: a.cumsum(1), "sort": lambda a, b: a.sort(1)[0],
    "topk": lambda a, b: a.topk(2)[1],
    "softmax": lambda a, b: a.softmax(1), "log_softmax": lambda a, b: a.log_softmax(0),
    "addmm": lambda a, b: torch.addmm(a[:, :4], a, b.t()),
    "bmm": lambda a, b: torch.bmm(a.view(2, 2, 6), b.view(2, 6, 2)),
    "gather": lambda a, b: a.gather(1, IDX.to(a.device)),
    "index_select": lambda a, b: a.index_select(1, IDX[:, 0].to(a.device)),
    "index": lambda a, b: a[IDX[:, 0].to(a.device) % 4], "cat": lambda a, b: torch.cat([a, b], 1),
    "stack": lambda a, b: torch.stack([a, b]), "tril": lambda a, b: a.tril(),
    "flip": lambda a, b: a.flip(0),
    "layer_norm": lambda a, b: F.layer_norm(a, (6,)), "gelu": lambda a, b: F.gelu(a),
    "mse_loss mean": lambda a, b: F.mse_loss(a, b),
    "mse_loss none": lambda a, b: F.mse_loss(a, b, reduction="none"),
    "cross_entropy": lambda a, b: F.cross_entropy(a, IDX[:, 0].to(a.device)),
    "avg_pool": lambda a, b: F.avg_pool2d(a.view(1, 1, 4, 6), 2),
    "embedding": lambda a, b: F.embedding(IDX.to(a.device), a.t()),
    "scatter_add": lambda a, b: torch.zeros(4, 6, device=a.device).scatter_add(
        1, IDX.to(a.device), b[:, :2]),
    "masked_fill": lambda a, b: a.masked_fill(a > 0, 0.0),
    "int64 ops": lambda a, b: (a * 10).long() // 3 % 5,
}


@pytest.mark.parametrize("name", FUNCTIONAL)
def test_matches_cpu(name):
    fn = FUNCTIONAL[name]
    expected = fn(A, B)
    got = fn(A.to("openreg"), B.to("openreg"))
    assert got.device.type == "openreg"
    torch.testing.assert_close(got.cpu(), expected)


def test_in_place_and_out_forms():
    a = A.to("openreg").clone()
    a.exp_().clamp_(max=2.0).sigmoid_()
    torch.testing.assert_close(a.cpu(), A.exp().clamp(max=2.0).sigmoid())
    out = torch.empty(0, device="openreg")
    torch.sin(A.to("openreg"), out=out)
    torch.testing.assert_close(out.cpu(), A.sin())
    values, indices = (torch.empty(0, device="openreg"),
                       torch.empty(0, dtype=torch.long, device="openreg"))
    torch.max(A.to("openreg"), 1, out=(values, indices))
    torch.testing.assert_close(values.cpu(), A.max(1).values)


def test_shapes_change_between_calls():
    """The Meta cache is keyed by shapes: a new shape is planned afresh."""
    for n in (3, 7, 3, 11):
        x = torch.randn(n, 5)
        torch.testing.assert_close(x.to("openreg").softmax(1).cpu(), x.softmax(1))


def test_argument_errors_are_raised_at_the_call():
    a = torch.randn(3, 4, device="openreg")
    with pytest.raises(RuntimeError,
                       match="size of tensor a .3. must match the size of tensor b .5."):
        torch.maximum(a, torch.randn(5, 4, device="openreg"))
    with pytest.raises(IndexError, match="Dimension out of range"):
        a.sum(7)
    assert torch.equal((a * 0).sum().cpu(), torch.tensor(0.0))  # the device is fine afterwards


def test_errors_a_meta_kernel_misses_surface_at_synchronization():
    """PyTorch's Meta kernel for _softmax does not check dim. A new plan is checked against the
    CPU kernel, so the first call raises the CPU kernel's own error; a kernel that fails later
    (an index out of range, known only from the data) is reported, as with a GPU, by the next
    synchronization."""
    a = torch.randn(3, 4, device="openreg")
    with pytest.raises(IndexError, match="Dimension out of range"):
        a.softmax(5)
    good, bad = torch.tensor([0, 2], device="openreg"), torch.tensor([0, 7], device="openreg")
    a.index_select(1, good)  # plans and checks the call (along dim 0 it has a kernel of its own)
    b = a.index_select(1, bad)  # queued with the same plan
    with pytest.raises(RuntimeError, match="kernel failed on the device: INDICES element is "
                                           "out of DATA bounds") as caught:
        b.cpu()
    assert "Exception raised from" not in str(caught.value)  # the message, not a C++ backtrace
    assert torch.equal((a * 0).sum().cpu(), torch.tensor(0.0))


def test_launch_blocking_reports_those_errors_at_the_call():
    from conftest import run_python

    code = ("import torch\n"
            "a = torch.randn(3, 4, device='openreg')\n"
            "a.index_select(1, torch.tensor([0, 2], device='openreg'))\n"
            "try:\n"
            "    a.index_select(1, torch.tensor([0, 7], device='openreg'))\n"
            "except RuntimeError as e:\n"
            "    print('at the call:', 'out of DATA bounds' in str(e))\n")
    assert (run_python(code, env={"OPENREG_LAUNCH_BLOCKING": "1"}).stdout.strip()
            == "at the call: True")


GRAD_INPUT_OPS = {  # functional operators whose out= overload is `grad_input` or `output`
    "threshold_backward": lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.0),
    "sigmoid_backward": lambda g, x: torch.ops.aten.sigmoid_backward(g, x.sigmoid()),
    "tanh_backward": lambda g, x: torch.ops.aten.tanh_backward(g, x.tanh()),
    "gelu_backward": lambda g, x: torch.ops.aten.gelu_backward(g, x, approximate="tanh"),
    "silu_backward": lambda g, x: torch.ops.aten.silu_backward(g, x),
    "leaky_relu_backward": lambda g, x: torch.ops.aten.leaky_relu_backward(g, x, 0.1, False),
    "hardtanh_backward": lambda g, x: torch.ops.aten.hardtanh_backward(g, x, -0.5, 0.5),
    "nll_loss_forward": lambda g, x: torch.ops.aten.nll_loss_forward(
        g.log_softmax(1), (x.abs() * 3).long().clamp(max=g.shape[1] - 1)[:, 0], None, 1, -100),
}


@pytest.mark.parametrize("name", sorted(GRAD_INPUT_OPS))
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_grad_input_and_output_overloads_match_cpu(name, layout):
    """These run their `grad_input`/`output` overload into the new device result (found by
    out_variant), not the functional kernel and a copy: results and layouts as on the CPU."""
    torch.manual_seed(0)
    g, x = torch.randn(6, 40), torch.randn(6, 40)
    if layout == "transposed":
        g, x = torch.randn(40, 6).t(), torch.randn(40, 6).t()
    fn = GRAD_INPUT_OPS[name]
    expected, got = fn(g, x), fn(g.to("openreg"), x.to("openreg"))
    for e, d in zip(*[(r,) if isinstance(r, torch.Tensor) else r for r in (expected, got)]):
        assert d.device.type == "openreg" and d.stride() == e.stride()
        torch.testing.assert_close(d.cpu(), e)


OTHER_OUT_NAMES = {  # functional overloads whose out= overload has another name, or a sibling's
    "all (all.all_out)": lambda x: x.all(),
    "any (any.all_out)": lambda x: x.any(),
    "max (max.unary_out)": lambda x: x.max(),
    "any.dim (any.out, not any.dims_out)": lambda x: x.any(dim=1),
    "any.dims (any.dims_out)": lambda x: x.any(dim=(0, 1)),
    "sort.stable (sort.values_stable)": lambda x: x.sort(dim=1, stable=True),
    "sort (sort.values)": lambda x: x.sort(0, descending=True),
}


@pytest.mark.parametrize("name", sorted(OTHER_OUT_NAMES))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bool, torch.int64], ids=str)
def test_out_overloads_found_by_their_arguments_match_cpu(name, dtype):
    """out_variant finds these by name or by trying every overload; the arguments' types must
    match too (any.dims_out takes int[]? where any.dim takes int), which a wrong pick breaks."""
    x = torch.randn(7, 9, generator=torch.Generator().manual_seed(2)).mul(4).to(dtype)
    fn = OTHER_OUT_NAMES[name]
    expected, got = fn(x), fn(x.to("openreg"))
    for e, d in zip(*[(r,) if isinstance(r, torch.Tensor) else r for r in (expected, got)]):
        assert d.device.type == "openreg" and d.dtype == e.dtype and d.shape == e.shape
        assert torch.equal(d.cpu(), e)


LAYER_NORM_CASES = {  # input shape, normalized shape, parameters, input dtype, parameters' dtype
    "2d affine": ((16, 64), (64,), True, torch.float32, torch.float32),
    "3d over two dims": ((4, 8, 12), (8, 12), True, torch.float32, torch.float32),
    "no parameters": ((5, 7), (7,), False, torch.float32, None),
    "strided input": ((24, 12), (12,), True, torch.float32, torch.float32),
    "no rows": ((0, 8), (8,), True, torch.float32, torch.float32),
    "float64": ((6, 10), (10,), True, torch.float64, torch.float64),
    "bfloat16": ((16, 64), (64,), True, torch.bfloat16, torch.bfloat16),
    "bfloat16, float32 parameters": ((16, 64), (64,), True, torch.bfloat16, torch.float32),
}


@pytest.mark.parametrize("case", sorted(LAYER_NORM_CASES))
def test_layer_norm_writer_gives_the_cpu_bits(case):
    """native_layer_norm and its backward fill the planned results with PyTorch's own compute
    routine (a writer, no functional result and copy): forward and every gradient bit for bit as
    on the CPU, on the first call (checked against the CPU kernel) and on the cached plan after."""
    shape, normalized, affine, dtype, pdtype = LAYER_NORM_CASES[case]
    torch.manual_seed(0)
    x = torch.randn(*shape, dtype=dtype)
    if case == "strided input":
        x = torch.randn(*reversed(shape), dtype=dtype).t()
    params = [torch.randn(normalized, dtype=pdtype) for _ in range(2)] if affine else [None, None]
    grad = torch.randn(*x.shape, dtype=dtype)

    def run(device):
        leaves = [t.detach().to(device).clone().requires_grad_() if t is not None else None
                  for t in (x, *params)]
        y = F.layer_norm(leaves[0], normalized, leaves[1], leaves[2])
        y.backward(grad.to(device))
        return [y.detach()] + [t.grad for t in leaves if t is not None]

    with cpu_threads_of_kernels():  # the CPU's bits for the kernels' thread count
        expected = run("cpu")
    for _ in range(2):
        for e, d in zip(expected, run("openreg")):
            assert d.dtype == e.dtype and torch.equal(d.cpu(), e)


def test_a_plan_takes_the_cpu_kernels_dtypes():
    """Meta says native_layer_norm's mean and rstd of a bfloat16 input are float32; PyTorch's CPU
    kernel returns them in bfloat16. The plan follows the CPU kernel: the second call, on the
    cached plan, used to fail inside the kernel ("Expected out tensor to have dtype BFloat16")."""
    x = torch.randn(4, 8, dtype=torch.bfloat16)
    w, b = torch.randn(8, dtype=torch.bfloat16), torch.randn(8, dtype=torch.bfloat16)
    expected = torch.ops.aten.native_layer_norm(x, [8], w, b, 1e-5)
    for _ in range(3):
        got = torch.ops.aten.native_layer_norm(x.to("openreg"), [8], w.to("openreg"),
                                               b.to("openreg"), 1e-5)
        for e, d in zip(expected, got):
            assert d.dtype == e.dtype and torch.equal(d.cpu(), e)


def test_plans_keep_the_cpu_kernels_layout_and_math_bits():
    """Found by the OpInfo sweep: max_unpool2d's Meta kernel says channels last where the CPU
    kernel writes rows (a plan takes the CPU's strides); linalg_lu_solve with left=False
    returns a conjugate view (every call runs as the first); embedding's backward has a Python
    Meta kernel that takes no out= (no .out overload for it). Each is called twice: the second
    call runs the cached plan."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(1, 2, 1, 3, generator=g)
    idx = torch.tensor([[[[7, 15, 11]], [[13, 8, 16]]]])
    a = torch.randn(3, 3, dtype=torch.complex64, generator=g)
    lu, piv = torch.linalg.lu_factor(a)
    b = torch.randn(4, 3, dtype=torch.complex64, generator=g)
    w = torch.randn(10, 3, generator=g)
    ids = torch.tensor([1, 2, 4, 2])

    def emb_grad(weight, i):
        weight = weight.clone().requires_grad_()
        torch.nn.functional.embedding(i, weight).pow(2).sum().backward()
        return weight.grad

    d = lambda t: t.to("openreg")  # noqa: E731
    for _ in range(2):
        unpooled = torch.nn.functional.max_unpool2d(d(x), d(idx), (3, 2), output_size=(3, 6))
        assert torch.equal(unpooled.cpu(), torch.nn.functional.max_unpool2d(
            x, idx, (3, 2), output_size=(3, 6)))
        for adjoint in (False, True):
            got = torch.linalg.lu_solve(d(lu), d(piv), d(b), left=False, adjoint=adjoint)
            expected = torch.linalg.lu_solve(lu, piv, b, left=False, adjoint=adjoint)
            torch.testing.assert_close(got.cpu(), expected)
        assert torch.equal(emb_grad(d(w), d(ids)).cpu(), emb_grad(w, ids))

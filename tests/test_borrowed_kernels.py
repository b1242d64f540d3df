"""The short host paths of the hottest borrowed operators (pointwise, foreach, cat and stack,
dtype conversions) agree with the CPU and hand every other case to PyTorch; two models train with
no fallback (docs/borrowed-kernels.md). tests/test_borrowed.py and tests/test_op_paths.py cover
the borrowed kernel itself and the data-dependent operators."""

import re

import pytest
import torch
from conftest import rand, run_example, run_python, same_outcome, special

from torch_openreg.openreg.testing.compare import cpu_threads_of_kernels, move_sample


def bits_equal(got, expected):
    """Bit for bit: the short path runs the CPU kernel itself (NaNs compare by their bits too)."""
    assert got.device.type == "openreg" and got.dtype == expected.dtype
    assert got.shape == expected.shape and got.stride() == expected.stride()
    got = got.cpu()
    if expected.dtype.is_floating_point:
        width = {2: torch.int16, 4: torch.int32, 8: torch.int64}[expected.element_size()]
        got, expected = got.contiguous().view(width), expected.contiguous().view(width)
    assert torch.equal(got, expected)


def test_borrowed_kernels_example():
    """examples/borrowed_kernels.py: a CNN and a transformer block train natively, zero
    fallbacks."""
    lines = run_example("borrowed_kernels.py").splitlines()
    assert lines[0].startswith("CNN: loss cpu") and lines[0].endswith("parameters match: True")
    assert (lines[1].startswith("transformer: loss cpu")
            and lines[1].endswith("parameters match: True"))
    assert lines[2] == "no operator fell back to the CPU"
    cpu, dev = lines[0].split("cpu ")[1].split(" openreg ")
    assert abs(float(cpu) - float(dev.split(",")[0])) < 1e-5


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
@pytest.mark.parametrize("name", ["_foreach_add", "_foreach_mul", "_foreach_div",
                                  "_foreach_addcmul", "_foreach_addcdiv", "_foreach_lerp",
                                  "_foreach_sqrt"])
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


# A call the CPU kernel refuses raises at the call, on the host, with PyTorch's message, leaves
# nothing pending on the stream, and the next call works: each case twice, since the second
# call of the same shapes finds the plan the first one left (or did not leave) in the cache.
INVALID_CALLS = {
    "out= of the wrong dtype": (
        lambda d: torch.all(torch.ones(3, 4, device=d), 1,
                            out=torch.empty(3, dtype=torch.float16, device=d)),
        "only supports bool tensor for result"),
    "random_ with an empty range": (
        lambda d: torch.empty(4, device=d).random_(5, 2), "expects 'from' to be less than 'to'"),
    "out= overlapping its input in part": (
        lambda d: (lambda x: torch.add(x[:4], 1, out=x[1:5]))(torch.arange(6.0, device=d)),
        "refer to a single memory location"),
    "boolean assignment of the wrong size": (
        lambda d: torch.zeros(3, 4, device=d).__setitem__(
            torch.tensor([True, False, True], device=d), torch.ones(5, device=d)),
        "shape mismatch"),
}


@pytest.mark.parametrize("name", INVALID_CALLS)
def test_invalid_calls_raise_at_the_call(name):
    call, message = INVALID_CALLS[name]
    with pytest.raises(RuntimeError, match=message):
        call("cpu")
    for _ in range(2):
        with pytest.raises(RuntimeError, match=message):
            call("openreg")
        torch.openreg.synchronize()  # nothing was left to fail later
        assert (torch.ones(2, device="openreg") + 1).tolist() == [2.0, 2.0]


def test_a_meta_refusal_defers_to_the_cpu_kernel():
    # index_reduce_'s Meta kernel selects from the source, which fails when the source is empty;
    # the CPU kernel accepts the call.
    for where in ("cpu", "openreg"):
        x = torch.ones(5, 3, device=where)
        empty = torch.empty(0, dtype=torch.long, device=where)
        x.index_reduce_(0, empty, torch.empty(0, 3, device=where), "prod")
        assert x.sum().item() == 15.0


def test_warnings_of_the_cpu_kernel_reach_python():
    # searchsorted's CPU kernel warns, once per process, about a non-contiguous boundary: in a
    # new process, the first call is openreg's, and the warning comes from the device's worker.
    result = run_python(
        "import warnings, torch, torch_openreg\n"
        "b = torch.arange(10.0, device='openreg')[::2]\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    torch.searchsorted(b, torch.tensor([3.0], device='openreg'))\n"
        "print([str(w.message) for w in caught])\n")
    assert "boundary tensor is non-contiguous" in result.stdout, result.stdout + result.stderr


def test_zero_tensors_reach_kernels_as_zeros():
    zero = torch._efficientzerotensor((3, 4), device="openreg")
    assert zero.clone().cpu().equal(torch.zeros(3, 4))
    assert torch.dot(zero[0], zero[0]).item() == 0.0
    assert (zero * 2).cpu().equal(torch.zeros(3, 4))


OUT_FILLS = {
    "arange": lambda out: torch.arange(6.0, out=out),
    "linspace": lambda out: torch.linspace(0, 1, 6, out=out),
    "logspace": lambda out: torch.logspace(0, 1, 6, out=out),
    "cumsum": lambda out: torch.cumsum(torch.ones(2, 3, device=out.device), 1, out=out),
}


@pytest.mark.parametrize("name", OUT_FILLS)
def test_out_arguments_keep_their_shape_and_strides(name):
    # A 2x3 out= that is every other column of a 2x6 tensor: the CPU kernel writes it in
    # place, whatever a Meta kernel would have resized it to.
    results = []
    for where in ("cpu", "openreg", "openreg"):  # twice: the second call finds the plan cached
        storage = torch.zeros(2, 6, device=where)
        out = storage[:, ::2]
        OUT_FILLS[name](out)
        results.append((out.shape, out.stride(), storage.cpu()))
    for shape, stride, storage in results[1:]:
        assert (shape, stride) == results[0][:2]
        torch.testing.assert_close(storage, results[0][2])


def assign_below(x: torch.Tensor) -> torch.Tensor:
    x[x < 50] = 1.0
    return x


def test_torchscript_index_lists_reach_the_kernel_as_device_views():
    # TorchScript builds the Tensor?[] of x[mask] = v with an element type of its own, which
    # IValue::isOptionalTensorList() does not recognize: the walk over a call's tensors must
    # still find the mask, or the CPU kernel receives a device tensor and fails.
    data = torch.arange(100.0, device="openreg")
    scripted = torch.jit.script(assign_below)
    got = scripted(data.clone())
    torch.testing.assert_close(got.cpu(), assign_below(data.clone().cpu()))


def test_the_functional_retry_gets_every_argument_again():
    # binary_cross_entropy's .out overload refuses a reduced output ("not resizable") on the
    # first launch of a plan; the kernel then runs the functional operator on a rebuilt stack:
    # the failed call had moved the optional weight out of the old one. A shape no other test
    # uses, so that the plan is new here.
    torch.manual_seed(0)
    weight, x = torch.rand(7), torch.rand(13, 7) * 0.9 + 0.05
    target = (torch.rand(13, 7) > 0.5).float()
    on_device = [t.to("openreg") for t in (x, target, weight)]
    for reduction in ("mean", "sum"):
        expected = torch.nn.functional.binary_cross_entropy(x, target, weight, reduction=reduction)
        for _ in range(3):
            got = torch.nn.functional.binary_cross_entropy(*on_device, reduction=reduction)
            torch.testing.assert_close(got.cpu(), expected)


@pytest.mark.parametrize("pad", [torch.nn.ReflectionPad3d(1), torch.nn.ReplicationPad3d(1),
                                 torch.nn.ReflectionPad2d(1), torch.nn.ReplicationPad2d(1)],
                         ids=lambda m: type(m).__name__)
def test_results_and_out_arguments_take_the_cpu_kernels_layout(pad):
    # Channels-last in, channels-last out, as on the CPU; the backward's CPU kernel lays out its
    # gradient (an out= argument PyTorch's wrapper allocated contiguous) anew, and the device
    # tensor must read it as written: three calls, the later ones from the cached plan.
    x = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    leaf = x.clone().requires_grad_()
    out = pad(leaf)
    out.backward(torch.arange(float(out.numel())).view(out.shape))
    for _ in range(3):
        on_device = x.to("openreg").requires_grad_()
        got = pad(on_device)
        got.backward(torch.arange(float(got.numel()), device="openreg").view(got.shape))
        assert got.stride() == out.stride() and on_device.grad.stride() == leaf.grad.stride()
        torch.testing.assert_close(got.cpu(), out)
        torch.testing.assert_close(on_device.grad.cpu(), leaf.grad)

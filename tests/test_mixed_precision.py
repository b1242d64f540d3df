"""Mixed precision on openreg: autocast with CUDA's policies, float32 accumulation in the float16
and bfloat16 kernels, torch.amp.GradScaler's device kernels, and the chapter's examples.

Covers the regions AMP_AUTOCAST_* (policy table, fallthrough, banned op), AMP_COMPUTE_TYPE,
AMP_SCALER_* (unscale, update, registration), NATIVE_MM_LAUNCH and AMP_PYTHON_SUPPORTED_DTYPES.
"""

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from conftest import ROOT, run_python

DEV = "openreg"
LOW = (torch.float16, torch.bfloat16)


# ---- autocast policies -------------------------------------------------------------------


def test_autocast_kernels_are_exactly_cudas():
    """Every operator CUDA's autocast handles has an openreg autocast kernel, and no other."""
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    names = [n for n in torch._C._dispatch_get_all_op_names() if n.startswith("aten::")]
    cuda = {n for n in names if has(n, "AutocastCUDA")}
    openreg = {n for n in names if has(n, "AutocastPrivateUse1")}
    # cuDNN's own convolutions are CUDA-only operators: the only difference.
    assert cuda - openreg == {"aten::cudnn_convolution", "aten::cudnn_convolution_transpose"}
    assert openreg - cuda == set()
    assert len(openreg) > 100


@pytest.mark.parametrize("dtype", LOW)
def test_each_policy_casts_like_cuda(dtype):
    x = torch.randn(4, 8, device=DEV)
    w = torch.randn(3, 8, device=DEV)
    img, k = torch.randn(1, 2, 5, 5, device=DEV), torch.randn(3, 2, 3, 3, device=DEV)
    q = torch.randn(1, 2, 4, 8, device=DEV)
    with torch.autocast(DEV, dtype=dtype):
        assert torch.get_autocast_dtype(DEV) == dtype
        # lower_precision_fp
        assert (x @ x.t()).dtype == dtype
        assert F.linear(x, w).dtype == dtype
        assert F.conv2d(img, k).dtype == dtype
        assert torch.bmm(x[None], x.t()[None]).dtype == dtype
        assert F.scaled_dot_product_attention(q, q, q).dtype == dtype
        # fp32, even for lower-precision inputs
        assert x.to(dtype).exp().dtype == torch.float32
        assert F.layer_norm(x.to(dtype), (8,)).dtype == torch.float32
        assert F.mse_loss(x.to(dtype), x).dtype == torch.float32
        # fp32_set_opt_dtype and fp32_append_dtype
        assert x.to(dtype).softmax(1).dtype == torch.float32
        assert x.to(dtype).sum().dtype == torch.float32
        assert x.to(dtype).norm().dtype == torch.float32
        # promote: the widest input dtype wins
        assert torch.addcmul(x, x.to(dtype), x).dtype == torch.float32
        assert torch.addcmul(x.to(dtype), x.to(dtype), x.to(dtype)).dtype == dtype
        # no policy: runs in the input's dtype
        assert F.relu(x).dtype == torch.float32


def test_binary_cross_entropy_is_banned_with_cudas_message():
    p = torch.rand(4, device=DEV)
    with torch.autocast(DEV), pytest.raises(RuntimeError) as error:
        F.binary_cross_entropy(p, p)
    assert str(error.value).startswith(
        "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
        "Many models use a sigmoid layer right before the binary cross entropy layer.")
    with torch.autocast(DEV):  # the safe form works
        assert F.binary_cross_entropy_with_logits(p, p).dtype == torch.float32
    assert F.binary_cross_entropy(p, p).dtype == torch.float32  # outside autocast: allowed


def test_supported_dtypes_and_unsupported_dtype_disables_autocast():
    assert torch.openreg.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
    assert torch.openreg.amp.get_amp_supported_dtype is torch.openreg.get_amp_supported_dtype
    assert torch.get_autocast_dtype(DEV) == torch.float16
    x = torch.randn(2, 2, device=DEV)
    with pytest.warns(UserWarning, match="openreg Autocast only supports dtypes of"):
        with torch.autocast(DEV, dtype=torch.float64):
            assert (x @ x).dtype == torch.float32
    assert not torch.is_autocast_enabled(DEV)


def test_autocast_leaves_cpu_tensors_alone():
    c, d = torch.randn(3, 3), torch.randn(3, 3, device=DEV)
    with torch.autocast(DEV):
        assert (c @ c).dtype == torch.float32
        assert (d @ d).dtype == torch.float16


class CountCasts(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.casts = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.casts += func is torch.ops.aten._to_copy.default
        return func(*args, **(kwargs or {}))


def test_casts_of_weights_are_cached_within_a_region():
    layer = nn.Linear(8, 8).to(DEV)
    x = torch.randn(2, 8, device=DEV)
    counts = {}
    for cache in (True, False):
        with torch.autocast(DEV, cache_enabled=cache), CountCasts() as counter:
            layer(layer(layer(x)))
        counts[cache] = counter.casts
    assert counts == {True: 3, False: 7}  # x once; weight and bias once, or once per use
    # The cache lives for one region: a new region casts again (the weights may have changed).
    with CountCasts() as counter:
        with torch.autocast(DEV):
            layer(x)
        with torch.autocast(DEV):
            layer(x)
    assert counter.casts == 6


def test_custom_fwd_and_custom_bwd():
    seen = {}

    class Product(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type=DEV, cast_inputs=torch.float32)
        def forward(ctx, a, b):
            seen["forward"] = (a.dtype, b.dtype, torch.is_autocast_enabled(DEV))
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        @torch.amp.custom_bwd(device_type=DEV)
        def backward(ctx, grad):
            seen["backward"] = (grad.dtype, torch.is_autocast_enabled(DEV))
            a, b = ctx.saved_tensors
            return grad @ b.t(), a.t() @ grad

    class Plain(torch.autograd.Function):  # custom_fwd without cast_inputs: autocast stays on
        @staticmethod
        @torch.amp.custom_fwd(device_type=DEV)
        def forward(ctx, a):
            seen["plain"] = ((a @ a).dtype, torch.is_autocast_enabled(DEV))
            return a.clone()

        @staticmethod
        @torch.amp.custom_bwd(device_type=DEV)
        def backward(ctx, grad):
            seen["plain backward"] = torch.is_autocast_enabled(DEV)
            return grad

    a = torch.randn(3, 3, device=DEV, requires_grad=True)
    with torch.autocast(DEV):
        out = Product.apply(a.half(), a)
        other = Plain.apply(a)
    (out.sum() + other.sum()).backward()
    assert out.dtype == torch.float32
    assert seen == {"forward": (torch.float32, torch.float32, False),
                    "backward": (torch.float32, False),
                    "plain": (torch.float16, True), "plain backward": True}
    assert a.grad.dtype == torch.float32 and a.grad.device.type == DEV


# ---- float16 and bfloat16 kernels accumulate in float32 ------------------------------------


def _error(x, ref):
    return ((x.double().cpu() - ref).abs().max() / ref.abs().max()).item()


_PRODUCTS = {
    "mm": (lambda a, b, c: a @ b, [(8, 4096), (4096, 8)]),
    "addmm": (lambda a, b, c: torch.addmm(c, a, b), [(8, 4096), (4096, 8), (8, 8)]),
    "bmm": (lambda a, b, c: torch.bmm(a, b), [(2, 8, 4096), (2, 4096, 8)]),
    "addbmm": (lambda a, b, c: torch.addbmm(c, a, b), [(2, 8, 4096), (2, 4096, 8), (8, 8)]),
    "linear": (lambda a, b, c: F.linear(a, b, c), [(8, 4096), (8, 4096), (8,)]),
    "conv2d": (lambda a, b, c: F.conv2d(a, b, c), [(2, 512, 5, 5), (4, 512, 3, 3), (4,)]),
    "sdpa": (lambda a, b, c: F.scaled_dot_product_attention(a, b, c),
             [(1, 2, 8, 4096), (1, 2, 8, 4096), (1, 2, 8, 16)]),
}


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", sorted(_PRODUCTS))
def test_products_accumulate_in_float32(name, dtype):
    """The result is the exact product rounded once: as accurate as float32 math, then a cast.

    Accumulating in the low dtype instead (what this test would catch) adds a rounding per
    partial sum over 4096 terms: several times the error of one final rounding.
    """
    torch.manual_seed(0)
    f, shapes = _PRODUCTS[name]
    ins = [torch.randn(s).to(dtype) for s in shapes] + [None] * (3 - len(shapes))
    exact = f(*[t.double() if t is not None else None for t in ins])
    once = _error(f(*[t.float() if t is not None else None for t in ins]).to(dtype), exact)
    out = f(*[t.to(DEV) if t is not None else None for t in ins])
    assert out.dtype == dtype
    assert _error(out, exact) <= 1.05 * once


def test_low_precision_accumulation_would_be_caught():
    """The proxy for a float16 accumulator: partial sums of 64 terms, added up in float16."""
    torch.manual_seed(0)
    a, b = torch.randn(8, 4096).half(), torch.randn(4096, 8).half()
    exact = a.double() @ b.double()
    once = _error((a.float() @ b.float()).half(), exact)
    acc = torch.zeros(8, 8, dtype=torch.float16)
    for k in range(0, 4096, 64):
        acc += (a[:, k:k + 64].float() @ b[k:k + 64].float()).half()
    assert _error(acc, exact) > 1.5 * once


@pytest.mark.parametrize("dtype", LOW)
def test_low_precision_backward_matches_cpu(dtype):
    """Gradients of a convolution and a matrix product in float16/bfloat16, against the CPU's."""
    torch.manual_seed(0)
    img, k = torch.randn(2, 3, 8, 8).to(dtype), torch.randn(4, 3, 3, 3).to(dtype)
    a, b = torch.randn(16, 32).to(dtype), torch.randn(32, 8).to(dtype)

    def grads(device):
        ts = [t.to(device).requires_grad_() for t in (img, k, a, b)]
        (F.conv2d(ts[0], ts[1]).float().sum() + (ts[2] @ ts[3]).float().square().sum()).backward()
        return [t.grad.cpu().double() for t in ts]

    tol = 2e-3 if dtype == torch.float16 else 1.6e-2
    for dev, cpu in zip(grads(DEV), grads("cpu")):
        assert dev.dtype == cpu.dtype
        assert ((dev - cpu).abs().max() / cpu.abs().max()).item() <= tol


# ---- GradScaler kernels ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_unscale_matches_cpu(dtype):
    torch.manual_seed(0)
    grads = [torch.randn(5, 3).to(dtype) * 1024, torch.randn(7).to(dtype) * 1024,
             torch.randn(4, 6).to(dtype).t() * 1024]  # the last is not contiguous
    results = {}
    for device in ("cpu", DEV):
        gs = [g.clone().to(device) for g in grads]  # .to("cpu") would not copy
        found = torch.zeros(1, device=device)
        torch._amp_foreach_non_finite_check_and_unscale_(gs, found,
                                                         torch.full((1,), 1 / 1024, device=device))
        results[device] = ([g.cpu() for g in gs], found.item())
    assert results[DEV][1] == results["cpu"][1] == 0.0
    for d, c in zip(results[DEV][0], results["cpu"][0]):
        assert d.dtype == dtype and torch.equal(d, c)


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
@pytest.mark.parametrize("contiguous", [True, False])
def test_unscale_finds_inf_and_nan(bad, contiguous):
    grads = [torch.ones(3, 4, device=DEV), torch.ones(4, 3, device=DEV, dtype=torch.float16)]
    if not contiguous:
        grads[1] = grads[1].t()
    grads[1][1, 2] = bad
    found = torch.zeros(1, device=DEV)
    torch._amp_foreach_non_finite_check_and_unscale_(grads, found,
                                                     torch.full((1,), 0.5, device=DEV))
    assert found.item() == 1.0
    assert (grads[0].cpu() == 0.5).all()  # every gradient is still unscaled, as on CUDA
    # found_inf is only ever set, never cleared: a clean call keeps the 1.0.
    torch._amp_foreach_non_finite_check_and_unscale_(grads[:1], found,
                                                     torch.ones(1, device=DEV))
    assert found.item() == 1.0


@pytest.mark.parametrize("where", [0, 40000, 99999, None])  # first, a middle chunk, last, none
@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_unscale_float32_large_gradient(where, bad):
    """float32 runs a vectorized loop split across threads: every chunk reports what it finds."""
    g = torch.randn(100000) * 1024
    if where is not None:
        g[where] = bad
    results = {}
    for device in ("cpu", DEV):
        grad = g.clone().to(device)
        found = torch.zeros(1, device=device)
        torch._amp_foreach_non_finite_check_and_unscale_([grad], found,
                                                         torch.full((1,), 1 / 1024, device=device))
        results[device] = (grad.cpu(), found.item())
    assert results[DEV][1] == results["cpu"][1] == (0.0 if where is None else 1.0)
    torch.testing.assert_close(results[DEV][0], results["cpu"][0], rtol=0, atol=0, equal_nan=True)


def test_unscale_rejects_bad_arguments():
    g = [torch.ones(2, device=DEV)]
    found, inv = torch.zeros(1, device=DEV), torch.ones(1, device=DEV)
    fn = torch._amp_foreach_non_finite_check_and_unscale_
    with pytest.raises(RuntimeError, match="found_inf must be a Float tensor"):
        fn(g, torch.zeros(1, device=DEV, dtype=torch.float64), inv)
    with pytest.raises(RuntimeError, match="inv_scale must be a 1-element tensor"):
        fn(g, found, torch.ones(2, device=DEV))
    with pytest.raises(RuntimeError, match="gradients must be floating point"):
        fn([torch.ones(2, device=DEV, dtype=torch.int32)], found, inv)
    with pytest.raises(RuntimeError, match="every gradient must be on openreg:0"):
        fn([torch.ones(2, device="openreg:1")], found, inv)
    fn([], found, inv)  # nothing to do


def test_update_scale_matches_cpu_over_a_sequence():
    states = {}
    for device in ("cpu", DEV):
        scale = torch.full((1,), 1024.0, device=device)
        tracker = torch.zeros(1, dtype=torch.int32, device=device)
        trace = []
        for inf in (0, 0, 0, 1, 0, 0, 0, 0):
            found = torch.full((1,), float(inf), device=device)
            torch._amp_update_scale_(scale, tracker, found, 2.0, 0.5, 3)
            trace.append((scale.item(), tracker.item()))
        states[device] = trace
    assert states[DEV] == states["cpu"]
    assert states[DEV][2] == (2048.0, 0) and states[DEV][3] == (1024.0, 0)


def test_update_scale_does_not_grow_past_float32():
    scale = torch.full((1,), 3e38, device=DEV)
    tracker = torch.zeros(1, dtype=torch.int32, device=DEV)
    torch._amp_update_scale_(scale, tracker, torch.zeros(1, device=DEV), 2.0, 0.5, 1)
    assert scale.item() == pytest.approx(3e38) and math.isfinite(scale.item())
    with pytest.raises(RuntimeError, match="growth_tracker must be a Int tensor"):
        torch._amp_update_scale_(scale, tracker.float(), torch.zeros(1, device=DEV), 2.0, 0.5, 1)


def test_grad_scaler_runs_no_fallback_and_round_trips_its_state():
    code = """
import torch, torch.nn as nn
model = nn.Linear(4, 1).to("openreg")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("openreg", init_scale=256.0, growth_interval=1)
x = torch.randn(8, 4, device="openreg")
for poison in (False, True, False):
    opt.zero_grad()
    with torch.autocast("openreg"):
        loss = model(x).float().pow(2).mean()
    scaler.scale(loss).backward()
    if poison:
        model.bias.grad.fill_(float("nan"))
    scaler.unscale_(opt)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    print(scaler.get_scale())
other = torch.amp.GradScaler("openreg")
other.load_state_dict(scaler.state_dict())
print(other.state_dict() == scaler.state_dict(), other.get_scale())
print(other.scale(torch.ones((), device="openreg")).item())
print(torch.openreg.fallback_report())
"""
    result = run_python(code, env={"OPENREG_STRICT_FALLBACK": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["512.0", "256.0", "512.0", "True 512.0", "512.0",
                                          "no operator fell back to the CPU"]


# ---- the chapter's examples ---------------------------------------------------------------


def _run_example(name):
    result = run_python((ROOT / "examples" / name).read_text(),
                        env={"OPENREG_STRICT_FALLBACK": "1"}, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_example_policies_cache_and_custom_fwd():
    out = _run_example("mixed_precision.py")
    assert out[:5] == ["default autocast dtype: torch.float16", "mm -> torch.float16",
                       "softmax -> torch.float32", "sum -> torch.float32",
                       "addcmul(float32, float16, float32) -> torch.float32"]
    assert out[5].startswith("binary_cross_entropy: torch.nn.functional.binary_cross_entropy")
    assert "cache_enabled=True: 3 casts for three uses of one layer" in out
    assert "cache_enabled=False: 7 casts for three uses of one layer" in out
    assert "custom_fwd result: torch.float32" in out


def test_example_training_matches_cpu_autocast_with_no_fallback():
    out = _run_example("mixed_precision_training.py")
    assert out[-1] == "no operator fell back to the CPU"
    curves = {}
    for line in out[:-1]:
        label, rest = line[:30].strip(), line[30:]  # the example pads labels to 30 columns
        curves[label] = [float(v) for v in rest.split("(")[0].split()]
    for model in ("CNN", "transformer"):
        reference = curves[f"{model}, cpu bfloat16"]
        assert reference[-1] < reference[0]  # it learns
        for dtype in ("float16", "bfloat16"):
            losses = curves[f"{model}, openreg {dtype}"]
            assert len(losses) == len(reference) == 6
            assert max(abs(a - b) for a, b in zip(losses, reference)) < 1e-2, (model, dtype)


def test_example_scaler():
    out = _run_example("mixed_precision_scaler.py")
    assert [line.split(": parameters updated: ")[1] for line in out[:5]] == [
        "False scale now 32768", "True  scale now 32768", "False scale now 16384",
        "True  scale now 16384", "True  scale now 32768"]
    assert out[2].startswith("step, inf injected")
    assert out[6] == "restored scale: 32768.0 | growth tracker: 0"
    assert out[7].endswith("(ratio 32768 = the scale)")


def test_benchmark_harness_runs():
    """benchmarks/amp.py --quick: checks the harness, not the numbers (they are measured by
    hand)."""
    import subprocess
    import sys

    amp = [sys.executable, str(ROOT / "benchmarks" / "amp.py")]
    result = subprocess.run(amp + ["--quick", "--kernel-threads", "1"], capture_output=True,
                            text=True, timeout=600, cwd=ROOT / "benchmarks")
    assert result.returncode == 0, result.stderr
    assert "UserWarning" not in result.stderr, result.stderr  # float32 rows: autocast off
    assert "openreg kernels on 1" in result.stdout.splitlines()[0]
    for model in ("CNN", "transformer"):
        for case in ("bf16 / CPU bf16", "fp16+scaler / CPU fp16+scaler",
                     "fp16+scaler / CPU bf16", "fp16+scaler / CPU float32",
                     "float32 / CPU float32"):
            assert f"{model}, {case}" in result.stdout, (model, case)
    refused = subprocess.run(amp + ["--kernel-threads", "0"], capture_output=True, text=True,
                             timeout=120)
    assert refused.returncode == 2 and "--kernel-threads must be between 1" in refused.stderr


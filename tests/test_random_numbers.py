"""Random numbers drawn on the device from the openreg generators, tested by their effects."""

import pytest
import torch

from conftest import run_example, run_python


def test_distributions_have_the_right_moments():
    torch.openreg.manual_seed(0)
    n = 200_000
    normal = torch.randn(n, device="openreg").cpu()
    assert abs(normal.mean()) < 0.01 and abs(normal.std() - 1) < 0.01
    uniform = torch.empty(n, device="openreg").uniform_(-2, 6).cpu()
    assert uniform.min() >= -2 and uniform.max() < 6 and abs(uniform.mean() - 2) < 0.05
    ints = torch.randint(3, 10, (n,), device="openreg").cpu()
    assert set(ints.unique().tolist()) == set(range(3, 10))
    coin = torch.empty(n, device="openreg").bernoulli_(0.3).cpu()
    assert abs(coin.mean() - 0.3) < 0.01
    probs = torch.tensor([0.0, 1.0], device="openreg").expand(1000, 2)
    draws = torch.bernoulli(probs).cpu()
    assert draws[:, 0].sum() == 0 and draws[:, 1].sum() == 1000


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_floating_dtypes(dtype):
    x = torch.randn(1000, device="openreg", dtype=dtype)
    assert x.dtype == dtype and x.cpu().float().std() > 0.5


def test_seeding_reproduces_and_advances():
    torch.openreg.manual_seed(42)
    a = torch.randn(1000, device="openreg").cpu()
    b = torch.randn(1000, device="openreg").cpu()
    torch.openreg.manual_seed(42)
    assert torch.equal(torch.randn(1000, device="openreg").cpu(), a)
    assert not torch.equal(a, b)


def test_explicit_generators_and_state():
    g = torch.Generator(device="openreg").manual_seed(7)
    first = torch.randn(5, device="openreg", generator=g).cpu()
    state = g.get_state()
    second = torch.randn(5, device="openreg", generator=g).cpu()
    g.set_state(state)
    assert torch.equal(torch.randn(5, device="openreg", generator=g).cpu(), second)
    assert torch.equal(torch.randn(5, device="openreg", generator=g.manual_seed(7)).cpu(), first)
    with pytest.raises(RuntimeError, match="expected a generator on openreg:1"):
        torch.randn(3, device="openreg:1", generator=g)


def test_devices_have_independent_streams():
    torch.openreg.manual_seed_all(5)
    reference = torch.randn(4, device="openreg:1").cpu()
    torch.openreg.manual_seed_all(5)
    torch.randn(1000, device="openreg:0")  # draws on device 0 ...
    assert torch.equal(torch.randn(4, device="openreg:1").cpu(), reference)  # ... leave 1 alone


def test_rng_state_all_and_fork_rng():
    torch.openreg.manual_seed_all(3)
    states = torch.openreg.get_rng_state_all()
    expected = [torch.rand(3, device=f"openreg:{i}").cpu() for i in range(2)]
    torch.openreg.set_rng_state_all(states)
    assert all(torch.equal(torch.rand(3, device=f"openreg:{i}").cpu(), expected[i])
               for i in range(2))
    torch.openreg.manual_seed(11)
    before = torch.openreg.get_rng_state()
    with torch.random.fork_rng(devices=[0], device_type="openreg"):
        torch.openreg.manual_seed(99)
        torch.rand(10, device="openreg")
    assert torch.equal(torch.openreg.get_rng_state(), before)


def test_dropout_uses_the_device_generator():
    torch.openreg.manual_seed(1)
    a = torch.nn.functional.dropout(torch.ones(1000, device="openreg"), 0.5).cpu()
    torch.openreg.manual_seed(1)
    b = torch.nn.functional.dropout(torch.ones(1000, device="openreg"), 0.5).cpu()
    assert torch.equal(a, b) and 0.4 < (a == 0).float().mean() < 0.6


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_dropout_one_kernel_matches_the_composite_path(dtype):
    """A contiguous input takes the fused kernel, a strided one bernoulli_ and two multiplications:
    the same seed gives the same mask and, bit for bit, the same result (inf and nan included)."""
    x = torch.randn(10_001, dtype=dtype)
    x[5], x[7] = float("inf"), float("nan")
    torch.openreg.manual_seed(3)
    fused, fused_mask = torch.ops.aten.native_dropout(x.to("openreg"), 0.3, True)
    strided = torch.empty(20_002, dtype=dtype, device="openreg")[::2]
    strided.copy_(x)
    torch.openreg.manual_seed(3)
    composite, composite_mask = torch.ops.aten.native_dropout(strided, 0.3, True)
    assert torch.equal(fused_mask.cpu(), composite_mask.cpu())
    torch.testing.assert_close(fused.cpu(), composite.cpu(), rtol=0, atol=0, equal_nan=True)
    kept = fused_mask.cpu()
    torch.testing.assert_close(fused.cpu(), (x * kept) * (1 / 0.7), equal_nan=True)
    assert 0.68 < kept.float().mean() < 0.72


def test_random_kernels_do_not_depend_on_the_thread_count():
    """Large draws are spread over threads; the numbers are those of one thread."""
    code = (
        "import hashlib, torch\n"
        "torch.openreg.manual_seed(0)\n"
        "x = torch.randn(1 << 16, device='openreg')\n"
        "m = torch.empty(1 << 16, device='openreg').bernoulli_(0.5)\n"
        "print(hashlib.sha256(x.cpu().numpy().tobytes() + m.cpu().numpy().tobytes()).hexdigest())\n"
    )
    assert run_python(code).stdout == run_python(code, env={"OMP_NUM_THREADS": "1"}).stdout


def test_results_do_not_depend_on_timing():
    """Offsets are reserved at launch, so a queued kernel draws the same numbers later."""
    code = (
        "import torch\n"
        "torch.openreg.manual_seed(0)\n"
        "x = torch.randn(1 << 16, device='openreg')\n"
        "y = torch.rand(10, device='openreg')\n"
        "print(y.cpu().tolist())\n"
    )
    normal = run_python(code).stdout
    blocking = run_python(code, env={"OPENREG_LAUNCH_BLOCKING": "1"}).stdout
    assert normal == blocking and normal


def test_complex_dtypes_draw_each_component():
    torch.openreg.manual_seed(0)
    z = torch.randn(100_000, dtype=torch.complex64, device="openreg").cpu()
    assert abs(z.real.var() - 0.5) < 0.02 and abs(z.imag.var() - 0.5) < 0.02
    u = torch.rand(1000, dtype=torch.complex128, device="openreg").cpu()
    assert 0 <= u.real.min() and u.real.max() < 1 and 0 <= u.imag.min() and u.imag.max() < 1


# ---- the generator objects (per-device defaults, seeding, state) ----


def test_default_generators_per_device():
    gens = list(torch.openreg.default_generators)
    assert len(gens) == torch.openreg.device_count()
    assert [g.device for g in gens] == [torch.device("openreg", i) for i in range(len(gens))]
    assert gens[0] is torch.openreg.default_generators[0]  # the same object each time


def test_new_generator_from_hooks():
    g = torch.Generator(device="openreg")
    assert g.device == torch.device("openreg:0")
    g.manual_seed(1234)
    assert g.initial_seed() == 1234


def test_seeding_functions_take_effect():
    torch.openreg.manual_seed(7)
    assert torch.openreg.initial_seed() == 7
    torch.openreg.manual_seed_all(11)
    assert [g.initial_seed() for g in torch.openreg.default_generators] == [11, 11]
    torch.openreg.seed_all()
    seeds = {g.initial_seed() for g in torch.openreg.default_generators}
    assert len(seeds) == 1 and 11 not in seeds


def test_state_round_trips_and_validates():
    g = torch.openreg.default_generators[1]
    g.manual_seed(99)
    state = torch.openreg.get_rng_state(1)
    assert state.dtype == torch.uint8 and state.device.type == "cpu"
    torch.openreg.manual_seed_all(0)
    torch.openreg.set_rng_state(state, 1)
    assert g.initial_seed() == 99
    states = torch.openreg.get_rng_state_all()
    torch.openreg.set_rng_state_all(states)
    try:
        torch.openreg.set_rng_state(torch.zeros(3, dtype=torch.uint8), 1)
    except RuntimeError as e:
        assert "openreg generator state is a CPU uint8 tensor of 16 bytes" in str(e)
    else:
        raise AssertionError("a malformed state must be rejected")


def test_random_numbers_example():
    out = run_example("random_numbers.py")
    assert "same seed, same numbers: True" in out and "device 1 untouched: True" in out
    assert "initial seed after fork_rng: 0" in out


@pytest.mark.parametrize("dtype, low, high", [
    (torch.int8, 0, 300), (torch.uint8, -1, 4), (torch.float16, 0, 2**20), (torch.float32, 5, 2)])
def test_random_ranges_are_validated_as_on_the_cpu(dtype, low, high):
    def error(device):
        try:
            torch.empty(4, dtype=dtype, device=device).random_(low, high)
        except RuntimeError as e:
            return str(e)
        return None
    assert error("cpu") is not None and error("openreg") == error("cpu")


def test_random_range_past_exact_floats_warns():
    with pytest.warns(UserWarning, match="out of bounds"):
        torch.empty(4, device="openreg").random_(0, 2**25)


def test_bernoulli_out_takes_the_shape_and_the_seeded_draws():
    probabilities = torch.full((2, 3), 0.5, device="openreg")
    torch.manual_seed(3)
    out = torch.bernoulli(probabilities, out=torch.empty(0, device="openreg"))
    torch.manual_seed(3)
    assert out.shape == (2, 3) and out.cpu().equal(torch.bernoulli(probabilities).cpu())


@pytest.mark.parametrize("low, high", [(-3.4e38, 3.4e38), (0.0, -42.0), (-1e39, 0.0)])
def test_uniform_bounds_are_validated_as_on_the_cpu(low, high):
    messages = []
    for where in ("cpu", "openreg"):
        with pytest.raises(RuntimeError) as raised:
            torch.empty(10, device=where).uniform_(low, high)
        messages.append(str(raised.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("fill", ["bernoulli_", "bernoulli_p", "bernoulli_tensor", "uniform_",
                                  "normal_", "random_"])
def test_random_fills_refuse_an_overlapping_target_at_the_call(fill):
    """An expanded target has many elements on one memory location: refused by the call itself,
    with the CPU's message, before anything is queued; the next call works."""
    x = torch.rand(1, device="openreg").expand(6)
    calls = {"bernoulli_": lambda: x.bernoulli_(), "bernoulli_p": lambda: x.bernoulli_(0.1),
             "bernoulli_tensor": lambda: x.bernoulli_(torch.rand(6, device="openreg")),
             "uniform_": lambda: x.uniform_(), "normal_": lambda: x.normal_(),
             "random_": lambda: x.random_(0, 3)}
    with pytest.raises(RuntimeError, match="unsupported operation: more than one element"):
        calls[fill]()
    torch.openreg.synchronize()  # nothing pending
    assert torch.ones(2, device="openreg").sum().item() == 2

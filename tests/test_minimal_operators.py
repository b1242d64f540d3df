"""Tensors on openreg: every dtype round-trips, views share storage, copies, the minimal ops."""

import pytest
import torch

from conftest import run_example, run_python

ALL_DTYPES = [
    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.uint16, torch.uint32, torch.uint64,
    torch.float16, torch.bfloat16, torch.float32, torch.float64,
    torch.complex32, torch.complex64, torch.complex128,
    torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz,
]


def sample(dtype: torch.dtype) -> torch.Tensor:
    """Distinct bytes per element, built without arithmetic the dtype may lack."""
    raw = torch.randint(0, 256, (3, 5, 7 * dtype.itemsize), dtype=torch.uint8)
    if dtype == torch.bool:
        return raw[..., :7] % 2 == 1
    return raw.view(dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_dtype_round_trips_exactly(dtype):
    x = sample(dtype)
    on_device = x.to("openreg")
    assert on_device.dtype == dtype and on_device.device.type == "openreg"
    back = on_device.cpu()
    assert back.view(torch.uint8).equal(x.view(torch.uint8))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_dtype_round_trips_through_strided_views(dtype):
    x = sample(dtype)
    back = x.to("openreg").transpose(0, 2)[::2].cpu()
    assert back.contiguous().view(torch.uint8).equal(
        x.transpose(0, 2)[::2].contiguous().view(torch.uint8))


def test_views_share_storage():
    x = torch.arange(12.0, device="openreg").reshape(3, 4)
    row = x[1]
    col = x[:, 2]
    alias = x.view(4, 3)
    row.add_(100)
    col.mul_(-1)
    assert row.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert alias.data_ptr() == x.data_ptr() and alias._is_view()
    expected = torch.arange(12.0).reshape(3, 4)
    expected[1] += 100
    expected[:, 2] *= -1
    assert torch.equal(x.cpu(), expected)
    assert torch.equal(alias.cpu(), expected.view(4, 3))


def test_as_strided_and_reshape_alias():
    x = torch.arange(10.0, device="openreg")
    windows = x.as_strided((4, 3), (2, 1), 1)
    assert torch.equal(windows.cpu(), torch.arange(10.0).as_strided((4, 3), (2, 1), 1))
    t = x[:8].reshape(2, 4).t().reshape(8)  # reshape of a non-contiguous view copies
    assert torch.equal(t.cpu(), torch.arange(8.0).reshape(2, 4).t().reshape(8))


def test_copies_between_devices():
    a = torch.randn(5, 6, device="openreg:0")
    b = a.to("openreg:1")
    assert b.device == torch.device("openreg:1")
    assert torch.equal(b.cpu(), a.cpu())
    c = torch.empty(6, 5, device="openreg:1")
    c.copy_(a.t())  # non-contiguous source on another device
    assert torch.equal(c.cpu(), a.cpu().t())
    d = torch.zeros(5, 6, dtype=torch.float64, device="openreg:0")
    d.copy_(b)  # cross-device with a dtype change
    assert torch.equal(d.cpu(), a.cpu().double())


def test_copy_converts_dtype_and_broadcasts():
    src = torch.arange(4, dtype=torch.int32)
    dst = torch.empty(3, 4, dtype=torch.float16, device="openreg")
    dst.copy_(src)
    assert torch.equal(dst.cpu(), src.half().expand(3, 4))
    host = torch.empty(4, 3, dtype=torch.float64)
    host.copy_(dst.t())
    assert torch.equal(host, src.double().expand(3, 4).t())


def test_resize_keeps_contents_and_grows_storage():
    x = torch.arange(4.0, device="openreg")
    x.resize_(2, 8)
    assert x.shape == (2, 8)
    assert torch.equal(x.flatten()[:4].cpu(), torch.arange(4.0))
    assert x.untyped_storage().nbytes() >= 16 * 4
    x.resize_(3)
    assert torch.equal(x.cpu(), torch.arange(3.0))
    y = torch.empty(0, device="openreg")
    y.resize_(5).fill_(7)
    assert torch.equal(y.cpu(), torch.full((5,), 7.0))


def test_storage_resize_through_hooks():
    x = torch.arange(4.0, device="openreg")
    storage = x.untyped_storage()
    storage.resize_(64)
    assert storage.nbytes() == 64
    assert torch.equal(x.cpu(), torch.arange(4.0))


def test_set_overloads():
    base = torch.arange(6.0, device="openreg")
    t = torch.empty(0, device="openreg")
    t.set_(base)
    assert torch.equal(t.cpu(), torch.arange(6.0))
    t.set_(base.untyped_storage(), 2, (2, 2), (1, 2))
    assert torch.equal(t.cpu(), torch.arange(6.0).as_strided((2, 2), (1, 2), 2))
    u = torch.empty(0, device="openreg").set_(base.untyped_storage())
    assert torch.equal(u.cpu(), torch.arange(6.0))
    with pytest.raises(RuntimeError, match="expected a storage on openreg"):
        torch.empty(0, device="openreg").set_(torch.ones(2).untyped_storage())


def test_item_and_scalars():
    x = torch.tensor([1.5, -2.0], device="openreg")
    assert x[0].item() == 1.5
    assert float(x[1]) == -2.0
    assert torch.tensor(7, device="openreg").item() == 7
    assert torch.tensor(True, device="openreg").item() is True


def test_mixing_with_cpu_raises_the_usual_error():
    x = torch.ones(3, device="openreg")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but "
                       "found at least two devices, openreg:0 and cpu"):
        x + torch.ones(3)
    with pytest.raises(RuntimeError, match="same device.*openreg:0 and cpu"):
        torch.sin(x) @ torch.ones(3, 3)
    with pytest.raises(RuntimeError, match="same device.*openreg:0 and cpu"):
        torch.maximum(x, torch.ones(3))  # an op that falls back to the CPU
    with pytest.raises(RuntimeError, match="openreg:0 and openreg:1"):
        x * torch.ones(3, device="openreg:1")
    assert torch.equal((x + torch.tensor(2.0)).cpu(), torch.full((3,), 3.0))  # 0-dim CPU is fine


def test_factories_and_unsupported_layouts():
    assert torch.equal(torch.zeros(2, 3, device="openreg").cpu(), torch.zeros(2, 3))
    assert torch.equal(torch.full((2,), 4, device="openreg").cpu(), torch.full((2,), 4))
    assert torch.equal(torch.arange(5, device="openreg").cpu(), torch.arange(5))
    assert torch.empty_strided((2, 3), (1, 2), device="openreg").stride() == (1, 2)
    with pytest.raises(RuntimeError, match="only CPU tensors can be pinned"):
        torch.empty(2, device="openreg", pin_memory=True)


def test_out_of_memory_raises_and_process_recovers():
    code = (
        "import torch\n"
        "keep = torch.empty(1 << 20, device='openreg')\n"
        "try:\n"
        "    torch.empty(64 << 20, device='openreg')\n"
        "except torch.OutOfMemoryError as e:\n"
        "    print('OOM', e)\n"
        "x = torch.ones(1 << 20, device='openreg')\n"
        "print('after', int(x.sum().item()))\n"
    )
    result = run_python(code, env={"OPENREG_DEVICE_MEMORY": "32M"})
    assert result.returncode == 0, result.stderr
    assert "OOM OpenReg out of memory. Tried to allocate 256.00 MiB (device 0; 32.00 MiB total " \
        "capacity; 12.00 MiB free; 4.00 MiB allocated by PyTorch; 20.00 MiB reserved by PyTorch)" \
        in result.stdout, result.stdout
    assert "after 1048576" in result.stdout


def test_autograd_through_native_and_fallback_ops():
    w_cpu = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    x_cpu = torch.randn(5, 4, dtype=torch.float64)
    w = w_cpu.detach().to("openreg").requires_grad_()
    x = x_cpu.to("openreg")
    (torch.tanh(x_cpu @ w_cpu) * 2 - 1).sum().backward()
    (torch.tanh(x @ w) * 2 - 1).sum().backward()
    assert w.grad.device.type == "openreg"
    torch.testing.assert_close(w.grad.cpu(), w_cpu.grad)


def test_minimal_operators_example():
    out = run_example("minimal_operators.py")
    assert "[30., 40., 50.]]" in out and "view shares storage: True" in out
    assert "resized: (4, 3) first rows kept: [[0.0, 1.0, 2.0], [30.0, 40.0, 50.0]]" in out
    assert "openreg:1 torch.float64 2.0" in out


def test_module_to_keeps_parameters_ties_and_the_optimizer():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(11, 6), torch.nn.Linear(6, 11, bias=False))
    model[1].weight = model[0].weight  # tied, as a language model ties its embeddings
    reference = [p.detach().clone() for p in model.parameters()]
    params = list(model.parameters())
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)  # built before .to()

    assert torch._has_compatible_shallow_copy_type(torch.ones(1), torch.ones(1, device="openreg"))
    model.to("openreg")
    assert [p is q for p, q in zip(model.parameters(), params)] == [True]
    assert model[1].weight is model[0].weight and params[0].device.type == "openreg"

    cpu = torch.nn.Sequential(torch.nn.Embedding(11, 6), torch.nn.Linear(6, 11, bias=False))
    cpu[1].weight = cpu[0].weight
    with torch.no_grad():
        cpu[0].weight.copy_(reference[0])
    cpu_optimizer = torch.optim.AdamW(cpu.parameters(), lr=0.1)
    tokens = torch.tensor([1, 4, 9, 2])
    for _ in range(3):
        for net, opt, where in ((model, optimizer, "openreg"), (cpu, cpu_optimizer, "cpu")):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(tokens.to(where)), tokens.to(where)).backward()
            opt.step()
    torch.testing.assert_close(model[0].weight.cpu(), cpu[0].weight)
    assert model[1].weight is model[0].weight


def test_lazy_module_materializes_on_the_device():
    lazy = torch.nn.LazyLinear(3).to("openreg")
    out = lazy(torch.ones(2, 4, device="openreg"))
    assert out.shape == (2, 3) and type(lazy) is torch.nn.Linear
    assert lazy.weight.device.type == "openreg"


def test_deterministic_mode_fills_new_memory():
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        assert torch.empty(3, device="openreg").isnan().all()
        assert (torch.empty(2, dtype=torch.int32, device="openreg") == 2**31 - 1).all()
        assert torch.empty_strided((2, 2), (1, 2), device="openreg").isnan().all()
        grown = torch.zeros(2, device="openreg").resize_(5).cpu()
        assert grown[:2].eq(0).all() and grown[2:].isnan().all()
    finally:
        torch.use_deterministic_algorithms(previous)


def test_resize_to_the_same_sizes_keeps_the_strides():
    for where in ("cpu", "openreg"):
        x = torch.empty(4, 4, device=where)[:, ::2]
        assert x.resize_(4, 2).stride() == (4, 2)


def test_is_set_to_asks_the_device_tensors_themselves():
    """is_set_to compares storage, offset, sizes and strides of the tensors themselves: through
    the fallback it would compare two fresh CPU copies and always say no."""
    t1 = torch.empty(3, 4, device="openreg")
    t2 = torch.tensor([], device="openreg").set_(t1)
    assert t1.is_set_to(t2) and t2.is_set_to(t1)
    assert not t1.is_set_to(torch.empty(3, 4, device="openreg"))  # another storage
    assert not t1.is_set_to(t1.view(4, 3))  # same storage, other sizes
    assert not t1.is_set_to(t1.t())  # other strides
    assert torch.openreg.fallback_counts().get("aten::is_set_to", 0) == 0

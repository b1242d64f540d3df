"""torch.openreg device management: count, current device, context manager, properties, errors."""

import pytest
import torch

from conftest import run_example, run_python


def test_availability_and_count():
    assert torch.openreg.is_available()
    assert torch.openreg.device_count() == 2
    assert torch.accelerator.current_accelerator() == torch.device("openreg")


def test_set_device_changes_where_tensors_go():
    try:
        torch.openreg.set_device(1)
        assert torch.openreg.current_device() == 1
        assert torch.empty(1, device="openreg").device == torch.device("openreg:1")
    finally:
        torch.openreg.set_device(0)
    assert torch.empty(1, device="openreg").device == torch.device("openreg:0")


def test_device_context_manager_restores():
    with torch.openreg.device(1):
        assert torch.openreg.current_device() == 1
        with torch.openreg.device("openreg:0"):
            assert torch.openreg.current_device() == 0
        assert torch.openreg.current_device() == 1
    assert torch.openreg.current_device() == 0


def test_current_device_is_per_thread():
    import threading

    seen = []
    with torch.openreg.device(1):
        worker = threading.Thread(target=lambda: seen.append(torch.openreg.current_device()))
        worker.start()
        worker.join()
    assert seen == [0]


def test_properties_and_name():
    props = torch.openreg.get_device_properties(1)
    assert props.name == torch.openreg.get_device_name(1) == "OpenReg Emulated Device"
    assert props.total_memory > 0


@pytest.mark.parametrize("make", [
    lambda: torch.empty(1, device="openreg:2"),
    lambda: torch.ones(3, device="openreg:99"),
    lambda: torch.openreg.set_device(5),
    lambda: torch.openreg.get_device_properties(7),
    lambda: torch.arange(3).to("openreg:4"),
])
def test_invalid_index_names_index_and_count(make):
    with pytest.raises(RuntimeError, match=r"openreg device index \d+: this process has 2"):
        make()


def test_synchronize_waits_for_queued_work():
    x = torch.ones(1 << 20, device="openreg")
    for _ in range(5):
        x = x * 2
    torch.openreg.synchronize()
    torch.openreg.synchronize("openreg:1")
    assert x.cpu()[0].item() == 32.0


def test_device_example():
    out = run_example("device.py")
    assert "openreg:1 openreg:1 tensor([1., 2., 3., 4.])" in out
    assert "bad index: Invalid openreg device index 99" in out
    assert "mixed devices: Expected all tensors to be on the same device" in out


def test_generated_methods():
    x = torch.ones(2)
    assert not x.is_openreg
    y = x.openreg()
    assert y.is_openreg and y.device.type == "openreg"
    assert y.untyped_storage().is_openreg
    m = torch.nn.Linear(2, 2).openreg(1)
    assert m.weight.device == torch.device("openreg:1")


def test_guard_streams_and_events():
    """The guard's stream and event parts, reached through torch.Stream and torch.Event."""
    side = torch.Stream(device="openreg")
    assert side != torch.accelerator.current_stream()
    start = torch.Event(device="openreg", enable_timing=True)
    end = torch.Event(device="openreg", enable_timing=True)
    x = torch.randn(1024, 1024, device="openreg")  # queued on the default stream
    side.wait_stream(torch.accelerator.current_stream())  # ... so the side stream must wait
    with side:  # exchangeStream in and out
        assert torch.accelerator.current_stream() == side
        start.record()
        y = x @ x
        end.record()
    assert torch.accelerator.current_stream().stream_id == 0
    end.synchronize()
    assert end.query()
    assert start.elapsed_time(end) > 0
    side.synchronize()
    torch.testing.assert_close(y.cpu(), x.cpu() @ x.cpu())


# ---- The device-module contract (docs/device.md, "The device-module contract") ----

# What PyTorch's own code reads on torch.<device type>, with places that read it (torch 2.13).
CONTRACT = {
    "is_available": "torch.accelerator.is_available, torch._utils._get_available_device_type",
    "device_count": "torch.accelerator.device_count, torch.random.fork_rng, torch.serialization",
    "current_device": "Tensor.openreg() (utils.backend_registration), FakeTensor, FSDP, DCP",
    "set_device": "DeviceMesh, choosing a device for its rank",
    "is_initialized": "FakeTensor, DeviceMesh",
    "_initialized": "torch.utils.checkpoint: save device RNG states only once it is true",
    "_lazy_init": "torch's C++ device_lazy_init, before the first openreg tensor",
    "_is_in_bad_fork": "torch.manual_seed and torch.seed, before seeding the device",
    "manual_seed_all": "torch.manual_seed and torch.seed",
    "device": "torch.utils.checkpoint, Storage.to (torch._utils._to)",
    "get_rng_state": "fork_rng, torch.utils.checkpoint, DTensor's RNG tracker, freeze_rng_state",
    "set_rng_state": "fork_rng, torch.utils.checkpoint, DTensor's RNG tracker, freeze_rng_state",
    "default_generators": "torch._prims.rng_prims (graph-safe random operators)",
    "_get_generator": "AOTAutograd's get_default_generator",
    "get_amp_supported_dtype": "torch.autocast",
    "synchronize": "torch.autograd.profiler.profile on exit, FSDP",
    "current_stream": "FSDP, torch.distributed.checkpoint's file system writer",
    "stream": "FSDP, torch.distributed.checkpoint's file system writer",
    "Stream": "FSDP's side streams",
    "Event": "FSDP's ordering of all-gathers",
    "empty_cache": "torch.distributed._tools.MemoryTracker",
    "memory_allocated": "torch.distributed._tools.MemoryTracker",
    "memory_reserved": "torch.distributed._tools.MemoryTracker",
    "memory_stats": "torch.distributed._tools.MemoryTracker",
    "memory_summary": "FSDP's optimizer-state utilities",
    "get_device_name": "torch._dynamo.package",
    "get_device_properties": "torch.nn.DataParallel (total_memory, multi_processor_count)",
    "_utils": "torch.serialization (_utils._get_device_index)",
}

# torch.cuda's functions that users and libraries call, which openreg mirrors beyond CONTRACT.
CUDA_COUNTERPARTS = [
    "init", "device_of", "get_rng_state_all", "set_rng_state_all", "manual_seed", "seed",
    "seed_all", "initial_seed", "mem_get_info", "max_memory_allocated", "max_memory_reserved",
    "reset_peak_memory_stats", "reset_accumulated_memory_stats", "get_device_capability",
    "is_bf16_supported", "default_stream", "set_stream", "StreamContext", "ExternalStream",
    "set_per_process_memory_fraction", "get_per_process_memory_fraction", "host_memory_stats",
    "ipc_collect", "empty_host_cache",
]

# Parameters torch.cuda takes that mean something only on CUDA.
CUDA_ONLY_PARAMETERS = {
    "Event": ["external"],  # an event a CUDA graph records or waits on
    "ExternalStream": ["kwargs"],  # passed on to torch.cuda.Stream
}


def _parameters(obj) -> list[str]:
    import inspect

    return list(inspect.signature(obj).parameters)


@pytest.mark.parametrize("name", sorted(CONTRACT) + CUDA_COUNTERPARTS)
def test_contract_name_present_with_cudas_parameters(name):
    """Each name is on torch.openreg, taking the parameters torch.cuda's takes, by name."""
    assert hasattr(torch.openreg, name), f"torch.openreg.{name} missing ({CONTRACT.get(name)})"
    ours, cudas = getattr(torch.openreg, name), getattr(torch.cuda, name, None)
    if callable(ours) and callable(cudas) and name not in ("default_generators",):
        expected = [p for p in _parameters(cudas) if p not in CUDA_ONLY_PARAMETERS.get(name, [])]
        assert _parameters(ours) == expected


def test_init_sets_initialized_and_counting_does_not():
    code = ("import torch\n"
            "m = torch.openreg\n"
            "m.device_count(); m.is_available()\n"
            "before = (m._initialized, m.is_initialized())\n"
            "m.init()\n"
            "print(before, (m._initialized, m.is_initialized()))")
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(False, False) (True, True)"


def test_seeding_reproduces_on_every_device():
    def draw(device):
        return torch.rand(4, device=device).cpu()

    torch.openreg.manual_seed(7)
    a = draw("openreg")
    torch.openreg.manual_seed(7)
    assert torch.equal(draw("openreg"), a) and torch.openreg.initial_seed() == 7
    torch.openreg.manual_seed_all(11)
    b0, b1 = draw("openreg:0"), draw("openreg:1")
    torch.manual_seed(11)  # torch seeds the device through _is_in_bad_fork and manual_seed_all
    assert torch.equal(draw("openreg:0"), b0) and torch.equal(draw("openreg:1"), b1)
    torch.openreg.seed_all()
    assert len({g.initial_seed() for g in torch.openreg.default_generators}) == 1
    before = torch.openreg.initial_seed()
    torch.openreg.seed()
    assert torch.openreg.initial_seed() != before


def test_rng_state_round_trips_per_device():
    for device, index in ((0, 0), (1, 1), ("openreg:1", 1), (torch.device("openreg", 0), 0)):
        state = torch.openreg.get_rng_state(device)
        assert state.dtype == torch.uint8 and state.device.type == "cpu"
        a = torch.rand(5, device=f"openreg:{index}").cpu()
        torch.openreg.set_rng_state(state, device)
        assert torch.equal(torch.rand(5, device=f"openreg:{index}").cpu(), a)
    # One device's state is its own: restoring device 1 leaves device 0 where it is.
    states = torch.openreg.get_rng_state_all()
    assert len(states) == 2
    torch.rand(3, device="openreg:0")
    zero = torch.openreg.get_rng_state(0)
    torch.openreg.set_rng_state(states[1], 1)
    assert torch.equal(torch.openreg.get_rng_state(0), zero)
    torch.openreg.set_rng_state_all(states)
    assert all(torch.equal(s, t) for s, t in zip(torch.openreg.get_rng_state_all(), states))


def test_generators_for_graph_safe_random():
    from torch._functorch._aot_autograd.utils import get_default_generator, get_device_rng_state

    device = torch.device("openreg:1")
    assert get_default_generator(device) is torch.openreg.default_generators[1]
    assert torch.equal(get_device_rng_state(device), torch.openreg.get_rng_state(1))
    assert len(torch.openreg.default_generators) == torch.openreg.device_count()
    assert [g.device for g in torch.openreg.default_generators] == [
        torch.device("openreg", i) for i in range(torch.openreg.device_count())]
    gen = torch.Generator(device="openreg")  # upstream OpenReg's tests use the offset calls
    gen.manual_seed(3)
    gen.set_offset(0)
    a = torch.rand(8, device="openreg", generator=gen).cpu()
    assert gen.get_offset() > 0
    gen.set_offset(0)
    assert torch.equal(torch.rand(8, device="openreg", generator=gen).cpu(), a)


def test_device_and_device_of_switch_and_restore():
    with pytest.raises(KeyError):
        with torch.openreg.device(1):
            assert torch.openreg.current_device() == 1
            raise KeyError  # restored on the way out of an exception too
    assert torch.openreg.current_device() == 0
    with torch.openreg.device(-1):  # a negative index changes nothing, as on CUDA
        assert torch.openreg.current_device() == 0
    with torch.openreg.device_of(torch.ones(1, device="openreg:1")):
        assert torch.openreg.current_device() == 1
    with torch.openreg.device_of(torch.ones(1, device="openreg:1").untyped_storage()):
        assert torch.openreg.current_device() == 1
    with torch.openreg.device(1), torch.openreg.device_of(torch.ones(1)):  # not on openreg
        assert torch.openreg.current_device() == 1
    assert torch.openreg.current_device() == 0
    with pytest.raises(TypeError, match="device_of expects a tensor or a storage, got int"):
        torch.openreg.device_of(1)


def test_mem_get_info_is_free_and_total_bytes():
    torch.openreg.empty_cache()
    free, total = torch.openreg.mem_get_info(1)
    assert type(free) is int and type(total) is int and 0 < free <= total
    assert total == torch.openreg.get_device_properties(1).total_memory
    x = torch.empty(16 << 20, dtype=torch.uint8, device="openreg:1")
    assert torch.openreg.mem_get_info("openreg:1")[0] <= free - (16 << 20)
    del x
    torch.openreg.empty_cache()
    assert torch.openreg.mem_get_info(1) == (free, total)


def test_properties_are_attributes_as_torch_reads_them():
    import warnings

    from torch.nn.parallel.data_parallel import _check_balance

    props = torch.openreg.get_device_properties(0)
    assert torch.openreg.get_device_capability(0) == (props.major, props.minor)
    assert props.multi_processor_count >= 1 and props.physical_id == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # two equal devices: no imbalance warning
        _check_balance([0, 1])  # reads total_memory and multi_processor_count


def _dropout_model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Dropout(0.5),
                                torch.nn.Linear(16, 1)).to("openreg")
    x = torch.randn(8, 16, device="openreg", requires_grad=True)
    return model, x


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_preserves_the_device_rng(use_reentrant):
    from torch.utils.checkpoint import checkpoint

    model, x = _dropout_model()
    state = torch.openreg.get_rng_state()
    model(x).sum().backward()
    plain = x.grad.clone()
    grads = {}
    for preserve in (True, False):
        x.grad = None
        torch.openreg.set_rng_state(state)
        checkpoint(model, x, use_reentrant=use_reentrant,
                   preserve_rng_state=preserve).sum().backward()
        grads[preserve] = x.grad.cpu()
    assert torch.equal(grads[True], plain.cpu())
    assert not torch.equal(grads[False], plain.cpu())  # the mask is drawn again without it


def test_fork_rng_restores_every_openreg_device():
    before = torch.openreg.get_rng_state_all()
    with torch.random.fork_rng(devices=[0, 1], device_type="openreg"):
        torch.rand(4, device="openreg:0")
        torch.rand(4, device="openreg:1")
        assert not torch.equal(torch.openreg.get_rng_state(1), before[1])
    assert all(torch.equal(s, t) for s, t in zip(torch.openreg.get_rng_state_all(), before))
    from torch.testing._utils import freeze_rng_state  # the accelerator's state, by PyTorch

    with freeze_rng_state():
        a = torch.rand(4, device="openreg").cpu()
    assert torch.equal(torch.rand(4, device="openreg").cpu(), a)


def test_autocast_on_openreg_asks_the_device_module():
    a = torch.randn(4, 4, device="openreg")
    for dtype in torch.openreg.get_amp_supported_dtype():
        with torch.autocast(device_type="openreg", dtype=dtype):
            assert (a @ a).dtype == dtype
    with pytest.warns(UserWarning, match="not supported"):
        with torch.autocast(device_type="openreg", dtype=torch.float64):
            assert (a @ a).dtype == torch.float32  # disabled: the dtype is not listed


def test_storage_to_and_save_on_cpu_use_the_device_module():
    storage = torch.arange(4.0).untyped_storage().to(device="openreg:1")
    assert storage.device == torch.device("openreg:1")
    x = torch.randn(4, device="openreg", requires_grad=True)
    with torch.autograd.graph.save_on_cpu(pin_memory=True, device_type="openreg"):
        y = (x * x).sum()
    y.backward()
    torch.testing.assert_close(x.grad.cpu(), 2 * x.detach().cpu())


def test_device_contract_example():
    out = run_example("device_contract.py")
    assert "preserve_rng_state=True: same gradient: True" in out
    assert "preserve_rng_state=False: same gradient: False" in out
    assert "fork_rng restores openreg:1: True" in out
    assert "autocast: torch.bfloat16" in out
    assert "current device 1" in out


# ---- The public-API snapshot (tests/openreg_api.txt, tools/api_snapshot.py) ----


def _api_snapshot():
    import sys

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "tools"))
    import api_snapshot

    return api_snapshot


def test_public_api_matches_snapshot():
    import difflib

    snapshot = _api_snapshot()
    recorded, current = snapshot.SNAPSHOT.read_text(), snapshot.render()
    diff = "".join(difflib.unified_diff(recorded.splitlines(True), current.splitlines(True),
                                        "tests/openreg_api.txt", "torch.openreg"))
    assert not diff, ("torch.openreg's public API changed; if on purpose, run "
                      "`python tools/api_snapshot.py --write` and commit the file:\n" + diff)


def test_snapshot_sees_a_new_name_and_a_changed_signature(monkeypatch):
    snapshot = _api_snapshot()
    recorded = snapshot.SNAPSHOT.read_text()
    monkeypatch.setattr(torch.openreg, "__all__", [*torch.openreg.__all__, "extra"])
    monkeypatch.setattr(torch.openreg, "extra", lambda: None, raising=False)
    assert "def extra()" in snapshot.render()
    monkeypatch.undo()

    def synchronize(device=None, blocking=True) -> None:  # one parameter more
        """A changed signature."""

    monkeypatch.setattr(torch.openreg, "synchronize", synchronize)
    assert snapshot.render() != recorded


def test_every_public_name_of_the_package_is_in_all():
    import inspect

    public = {name: getattr(torch.openreg, name) for name in dir(torch.openreg)
              if not name.startswith("_")}
    defined_here = [name for name, obj in public.items() if not inspect.ismodule(obj)
                    and getattr(obj, "__module__", "").startswith("torch_openreg")]
    assert sorted(set(defined_here) - set(torch.openreg.__all__)) == []

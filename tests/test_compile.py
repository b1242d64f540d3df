"""torch.compile on openreg: Dynamo's interface, Inductor's backend, the example and its code.

Covers COMPILE_DEVICE_INTERFACE, COMPILE_LAZY_HOOKS, COMPILE_REGISTER, COMPILE_SCHEDULING,
COMPILE_ENTRY_POINT, COMPILE_WRAPPER, COMPILE_RUNTIME_KERNEL, COMPILE_LAUNCH_* and the
example's regions. Inductor compiles are slow on two cores: every compile here shares one
TORCHINDUCTOR_CACHE_DIR per test session. The heaviest cases (the CNN and the transformer
block trained compiled, max-autotune; about 50 s together on a quiet machine) can be run
alone with

    python -m pytest -q tests/test_compile.py -k heavy
"""

import os
import subprocess
import sys
import tempfile

import pytest
import torch
import torch._dynamo.testing

from conftest import ROOT, gate, run_python

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="openreg_inductor_"))


def test_import_torch_loads_no_compiler():
    out = run_python(
        "import sys, torch\n"
        "names = ('torch._dynamo', 'torch._inductor', 'torch_openreg._inductor.backend')\n"
        "print(sorted(m for m in names if m in sys.modules))\n"
        "from torch._dynamo.device_interface import get_interface_for_device\n"
        "get = get_interface_for_device\n"
        "print(get('openreg').__name__, get('openreg:1').__name__)\n"
        "print('torch_openreg._inductor.backend' in sys.modules)\n"
        "print(torch.openreg.Scheduling.__name__)\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:4] == ["[]", "OpenRegInterface OpenRegInterface", "False",
                                          "OpenRegScheduling"]


def test_device_interface_switches_devices_and_streams():
    from torch._dynamo.device_interface import get_interface_for_device

    iface = get_interface_for_device("openreg")
    assert iface.device_count() == torch.openreg.device_count() and iface.is_available()
    previous = iface.exchange_device(1)
    assert iface.current_device() == 1
    iface.set_device(previous)
    s = torch.openreg.Stream(device=0)
    with iface.stream(s):
        assert iface.current_stream() == s
        assert iface.get_raw_stream(0) == s.native_handle
    assert iface.get_raw_stream(0) != s.native_handle
    assert iface.get_device_properties(0).name == torch.openreg.get_device_name(0)
    assert isinstance(iface.Event(), torch.Event) and isinstance(s, iface.Stream)
    with pytest.raises(AttributeError, match="no attribute 'NotAnInductorName'"):
        _ = torch.openreg.NotAnInductorName


def many_ops(x, w):
    y = (x.sin() + 1) * x.cos()                                   # pointwise chain
    n = torch.nn.functional.layer_norm(y, y.shape[-1:])           # fused normalization
    v = (y.t() * 2).reshape(-1)[::3] + x[1:5, 2:9].sum()          # views
    return n, y.sum(0), y.amax(1), v, torch.softmax(x @ w, -1)    # reductions, extern mm


def test_compiled_ops_match_eager():
    torch.manual_seed(0)
    x, w = torch.randn(33, 65), torch.randn(65, 7)
    got = torch.compile(many_ops)(x.to("openreg"), w.to("openreg"))
    for g, e in zip(got, many_ops(x, w)):
        assert g.device.type == "openreg"
        torch.testing.assert_close(g.cpu(), e, atol=1e-4, rtol=1e-4)


def test_kernels_launch_on_the_current_stream_of_their_device():
    f = torch.compile(lambda a: (a * 3 + 1).relu())
    x = torch.randn(1000, device="openreg:1")
    side = torch.openreg.Stream(device=1)
    with torch.openreg.stream(side):
        f(x)  # compile (and recompile for the stream context) outside the gate
    with torch.openreg.stream(side), gate(side) as release:
        out = f(x)  # queued behind the gate: the launch returned without running it
        assert side.query() is False
        release()
    side.synchronize()
    assert out.device == torch.device("openreg:1")
    torch.testing.assert_close(out.cpu(), (x.cpu() * 3 + 1).relu())


def test_dynamic_shapes_compile_once():
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounterWithBackend("inductor")
    f = torch.compile(lambda a: torch.nn.functional.layer_norm(a, (16,)).sum(-1), backend=counter)
    for n in (5, 9, 12):
        x = torch.randn(n, 16)
        dx = x.to("openreg")
        torch._dynamo.mark_dynamic(dx, 0)
        torch.testing.assert_close(f(dx).cpu(), torch.nn.functional.layer_norm(x, (16,)).sum(-1),
                                   atol=1e-4, rtol=1e-4)
    assert counter.frame_count == 1


def test_launch_rejects_bad_arguments():
    from torch_openreg import _C

    with pytest.raises(TypeError, match="argument 0 is a tensor on cpu, not on openreg"):
        _C._launch_compiled_kernel(1, 0, torch.zeros(2))
    with pytest.raises(TypeError, match="argument 1 has unsupported type str"):
        _C._launch_compiled_kernel(1, 0, 3, "x")
    with pytest.raises(RuntimeError, match="entry point is null"):
        _C._launch_compiled_kernel(0, 0, torch.zeros(2, device="openreg"))


def test_example_and_its_generated_code():
    """examples/compile.py runs, and the generated module the chapter shows has not drifted."""
    checked_in = ROOT / "examples" / "generated" / "compile_output_code.py"
    with tempfile.TemporaryDirectory() as tmp:
        fresh = os.path.join(tmp, "compile_output_code.py")
        result = subprocess.run([sys.executable, str(ROOT / "examples" / "compile.py"),
                                 "--output-code", fresh], capture_output=True, text=True,
                                timeout=900, cwd=ROOT)
        assert result.returncode == 0, result.stderr
        regenerated = open(fresh).read()
    out = result.stdout
    assert "kernels: ['openreg_fused_add_mul_native_layer_norm_sigmoid_0']" in out
    assert "buf3, device=0)']" in out
    assert "output on openreg:0 | matches eager: True" in out
    assert "on openreg:1, side stream: openreg:1 True" in out
    assert "CNN: 1 graph, 0 graph breaks" in out
    assert "transformer block: 1 graph, 0 graph breaks" in out
    assert regenerated == checked_in.read_text(), (
        "the generated code changed: python examples/compile.py --output-code "
        "examples/generated/compile_output_code.py")


def train_step(model, x, y, loss_fn):
    loss = loss_fn(model(x), y)
    loss.backward()
    return loss


def amp_step_breaks(device: str, dtype: torch.dtype):
    """torch._dynamo.explain of an AMP training step on `device`: (forward's, step's) results."""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(device)
    x = torch.randn(4, 3, 8, 8, device=device)
    y = torch.randint(0, 10, (4,), device=device)

    def forward(x, y):
        with torch.autocast(device, dtype=dtype):
            return nn.functional.cross_entropy(model(x), y)

    def step(x, y):
        loss = forward(x, y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        return loss

    torch._dynamo.reset()
    return torch._dynamo.explain(forward)(x, y), torch._dynamo.explain(step)(x, y)


def test_explain_amp_training_step():
    """The AMP step breaks only where Dynamo itself refuses to trace (GradScaler.scale, in
    torch.amp, on Dynamo's skip list), exactly as the same step does on the CPU."""
    forward, step = amp_step_breaks("openreg", torch.float16)
    assert forward.graph_break_count == 0 and forward.graph_count == 1
    reasons = [r.reason for r in step.break_reasons]
    assert step.graph_break_count == 1 and "GradScaler.scale" in reasons[0], reasons
    _, cpu_step = amp_step_breaks("cpu", torch.bfloat16)
    assert [r.reason for r in cpu_step.break_reasons] == reasons


@pytest.mark.parametrize("name", ["cnn", "transformer"])
def test_heavy_models_train_compiled(name):
    nn = torch.nn
    if name == "cnn":
        def make():
            return nn.Sequential(
                nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                nn.Flatten(), nn.Dropout(0.0), nn.Linear(32, 10))
        x, y = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))
        loss_fn = nn.functional.cross_entropy
    else:
        def make():
            return nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                              dropout=0.0, batch_first=True)
        x, y, loss_fn = torch.randn(2, 12, 64), torch.randn(2, 12, 64), nn.functional.mse_loss
    torch.manual_seed(0)
    cpu = make()
    dev = make().to("openreg")
    dev.load_state_dict(cpu.state_dict())
    assert torch._dynamo.explain(dev)(x.to("openreg")).graph_break_count == 0
    expected = train_step(cpu, x, y, loss_fn)
    got = torch.compile(train_step)(dev, x.to("openreg"), y.to("openreg"), loss_fn)
    torch.testing.assert_close(got.cpu(), expected, atol=1e-4, rtol=1e-4)
    for a, b in zip(cpu.parameters(), dev.parameters()):
        torch.testing.assert_close(b.grad.cpu(), a.grad, atol=1e-4, rtol=1e-4)


def test_heavy_max_autotune():
    f = torch.compile(lambda a, w: torch.nn.functional.layer_norm(a @ w, (24,)).relu(),
                      mode="max-autotune-no-cudagraphs")
    a, w = torch.randn(16, 32), torch.randn(32, 24)
    torch.testing.assert_close(f(a.to("openreg"), w.to("openreg")).cpu(),
                               torch.nn.functional.layer_norm(a @ w, (24,)).relu(),
                               atol=1e-4, rtol=1e-4)

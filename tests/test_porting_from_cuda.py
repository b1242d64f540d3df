"""Porting from CUDA: the table of names, the example, and each CUDA habit's counterpart."""

import functools
import re
import sys
import warnings

import pytest
import torch

from conftest import ROOT, run_example, run_python

CHAPTER = ROOT / "docs" / "porting-from-cuda.md"


def name_table() -> list[tuple[str, str, str]]:
    """The rows of the chapter's table of names: torch.cuda, torch.openreg, torch.accelerator."""
    text = CHAPTER.read_text(encoding="utf-8")
    start = text.index("| `torch.cuda` | `torch.openreg` | `torch.accelerator` |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append(tuple(re.sub(r"[`.]|\(\)", "", c).strip() for c in cells[:3]))
    return rows


def test_every_name_in_the_table_exists_on_both_sides():
    rows = name_table()
    assert len(rows) >= 25
    for cuda, openreg, accelerator in rows:
        assert hasattr(torch.cuda, cuda), cuda
        assert openreg != "—" or accelerator != "—", cuda
        if openreg != "—":
            assert hasattr(torch.openreg, openreg), openreg
        if accelerator != "—":
            assert hasattr(torch.accelerator, accelerator), accelerator


@functools.cache
def example_output() -> str:
    return run_example("porting_from_cuda.py")


def test_porting_from_cuda_example():
    out = example_output()
    for line in ("side stream result matches the CPU: True", "event timing works: True",
                 "one replay applied the step once: True",
                 "Module.to kept the Parameter objects: True", "tied weights stay tied: True",
                 "pinned: True", "autocast dtype: torch.bfloat16",
                 "default collective backend: orccl"):
        assert line in out, line


def test_cudnn_and_cuda_matmul_flags_change_nothing_on_openreg():
    x = torch.randn(2, 3, 8, 8, device="openreg")
    conv = torch.nn.Conv2d(3, 4, 3).to("openreg")
    a = torch.randn(64, 64, device="openreg")
    plain = (conv(x).cpu(), (a @ a).cpu())
    tf32 = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = True
        with torch.backends.cudnn.flags(enabled=True, benchmark=True, deterministic=False):
            flagged = (conv(x).cpu(), (a @ a).cpu())
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32
    assert all(torch.equal(p, f) for p, f in zip(plain, flagged))


def test_torch_cuda_amp_is_deprecated_and_torch_amp_takes_the_device_type():
    with pytest.warns(FutureWarning, match=r"torch.amp.autocast\('cuda'"):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "CUDA is not available", UserWarning)
            torch.cuda.amp.autocast()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaler = torch.amp.GradScaler("openreg")
        with torch.amp.autocast("openreg", dtype=torch.float16):
            y = torch.nn.Linear(4, 4).to("openreg")(torch.randn(2, 4, device="openreg"))
    assert y.dtype == torch.float16 and scaler.get_scale() == 65536.0


def test_visible_devices_are_openreg_visible_devices_not_cuda_visible_devices():
    code = ("import torch; print(torch.openreg.device_count(), "
            "torch.openreg.get_device_properties(0).physical_id)")
    only_second = run_python(code, env={"OPENREG_VISIBLE_DEVICES": "1"})
    assert only_second.stdout.split() == ["1", "1"], only_second.stderr
    cuda_var = run_python(code, env={"CUDA_VISIBLE_DEVICES": "1"})
    assert cuda_var.stdout.split() == ["2", "0"], cuda_var.stderr


FAULT = """
import torch
x = torch.ones(4, device="openreg")
torch.openreg.faults.inject("launch")
where = "the launch"
try:
    y = x * 2
    where = "synchronize"
    torch.openreg.synchronize()
except RuntimeError:
    print("raised at", where)
"""


@pytest.mark.parametrize("variable, where", [("OPENREG_LAUNCH_BLOCKING", "the launch"),
                                             ("CUDA_LAUNCH_BLOCKING", "synchronize")])
def test_launch_blocking_is_openreg_launch_blocking(variable, where):
    run = run_python(FAULT, env={"OPENREG_LAUNCH_BLOCKING": "0", variable: "1"})
    assert run.stdout.strip() == f"raised at {where}", run.stderr


def test_pin_memory_and_the_data_loader_pin_for_the_current_accelerator():
    assert torch.randn(4).pin_memory().is_pinned()
    with warnings.catch_warnings(record=True) as caught:  # it asks is_pinned(device) too
        warnings.simplefilter("always")
        torch.randn(4).pin_memory(device="openreg")
    assert any("argument 'device' of Tensor.pin_memory() is deprecated" in str(w.message)
               for w in caught)
    data = torch.utils.data.TensorDataset(torch.randn(8, 3))
    (batch,) = next(iter(torch.utils.data.DataLoader(data, batch_size=4, pin_memory=True)))
    assert batch.is_pinned()
    moved = batch.to("openreg", non_blocking=True)
    torch.accelerator.synchronize()
    assert torch.equal(moved.cpu(), batch)


def test_collective_backend_for_the_device_is_orccl():
    import torch.distributed as dist

    assert dist.get_default_backend_for_device("openreg") == "orccl"
    assert dist.get_default_backend_for_device("cuda") == "nccl"


def test_module_to_moves_parameters_in_place():
    model = torch.nn.Linear(3, 3)
    weight = model.weight
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.to("openreg")
    assert model.weight is weight and weight.device.type == "openreg"
    model(torch.ones(1, 3, device="openreg")).sum().backward()
    optimizer.step()  # built before .to(): still updates the parameters the model uses
    assert optimizer.param_groups[0]["params"][0] is model.weight


def test_text_export_writes_out_listings_and_outputs():
    """The site's plain-Markdown export (docs/_ext/text_export.py), run on this chapter."""
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    import text_export

    asked = []

    def outputs(argument: str, env: str) -> str:
        asked.append((argument, env))
        return example_output()

    text = text_export.export_page(CHAPTER.read_text(encoding="utf-8"), outputs)
    assert "{listing}" not in text and "{run-example}" not in text
    assert asked == [("../examples/porting_from_cuda.py", "")]
    index = text_export.listing.index()
    for name in ("NATIVE_BINARY_RAW_KERNEL", "NATIVE_TRY_RAW_KERNEL",
                 "EXAMPLE_PORTING_STREAMS_EVENTS_GRAPHS", "EXAMPLE_PORTING_DEVICE_GENERIC"):
        region = index.regions[name]
        code = [line.strip() for line in region.text.splitlines() if line.strip()]
        assert all(line in text for line in code), name
        assert f"`{region.path.relative_to(ROOT).as_posix()}` (region `{name}`):" in text
    assert "```c++\n// A hand-written device kernel" in text
    assert "Output of `examples/porting_from_cuda.py`:\n\n```text\nside stream result" in text


def test_text_export_leaves_no_block_on_any_page():
    """Listings inside tabs and notes are written out too; code that mentions a block is kept."""
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    import text_export

    for page in sorted((ROOT / "docs").glob("*.md")):
        text = text_export.export_page(page.read_text(encoding="utf-8"), lambda arg, env: "out")
        left = [line for line in text.splitlines() if text_export.BLOCK_RE.match(line)]
        assert not left, (page.name, left)

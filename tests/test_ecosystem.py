"""Your backend in the ecosystem: transformers, torchvision, timm, safetensors, accelerate and
PyTorch's own libraries on openreg, each next to the CPU.

Runs examples/ecosystem.py (EXAMPLE_ECOSYSTEM_HF_*), ecosystem_vision.py
(EXAMPLE_ECOSYSTEM_NMS_*, EXAMPLE_ECOSYSTEM_VISION_TRAINING), ecosystem_torch_apis.py,
ecosystem_device_lists.py, and the workaround ecosystem_torchvision_schemas.py
(EXAMPLE_ECOSYSTEM_TORCHVISION_SCHEMAS); loads tools/transformers_device_spec.py
(ECOSYSTEM_TRANSFORMERS_DEVICE_SPEC) through transformers' testing_utils. Whatever needs
torchvision runs in a fresh interpreter, so this process never imports it.
"""

import functools
import importlib.util
import json
import sys

import pytest
import torch

from conftest import ROOT, run_example, run_python

sys.path.insert(0, str(ROOT / "examples"))
from ecosystem_torchvision_schemas import SCHEMAS, compiled_ops_error  # noqa: E402

OFFLINE = {"HF_HUB_OFFLINE": "1"}


def installed(*names: str) -> None:
    """Skips the test unless every package is installed (found, not imported)."""
    for name in names:
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed")


def lines(out: str, *expected: str) -> None:
    for line in expected:
        assert line in out.splitlines(), (line, out)


# ---- transformers --------------------------------------------------------------------------


def test_ecosystem_example_transformers():
    """ecosystem.py: GPT-2 and BERT train like the CPU, stay tied, generate, load and pipe."""
    installed("transformers", "tokenizers")
    out = run_example("ecosystem.py", env=OFFLINE)
    for name in ("GPT-2", "BERT"):
        losses = [line.split(":", 1)[1] for line in out.splitlines()
                  if line.startswith(f"{name} losses")]
        assert len(losses) == 2 and losses[0].strip() == losses[1].strip(), out
        lines(out, f"{name} weights within 1e-4 of the CPU's: True",
              f"{name} output embedding still tied to the input embedding: True")
    lines(out, "the same tokens as the CPU's: True",
          "from_pretrained(...).to('openreg'): ['openreg:0'], weights equal: True, "
          "generation equal: True",
          "device_map='openreg': ['openreg:0'], weights equal: True, generation equal: True",
          "device_map over two devices: ['openreg:0', 'openreg:1'], weights equal: True, "
          "generation equal: True",
          "device_map='auto' placed the model on: cpu",
          "the same text on both: True")
    assert "pipeline on openreg: the cat sat on ... " in out


SPEC_CHECK = """
import json, os, sys
sys.path.insert(0, "examples")
from ecosystem_torchvision_schemas import declare_torchvision_schemas
declare_torchvision_schemas()
os.chdir("tools")  # testing_utils imports the spec by the name in the variable
import torch
import transformers.testing_utils as tu
device = tu.torch_device
tu.backend_manual_seed(device, 5)
first = torch.randn(4, device=device).cpu()
tu.backend_manual_seed(device, 5)
again = torch.randn(4, device=device).cpu()
torch.empty(1 << 20, device=device)
tu.backend_empty_cache(device)
print(json.dumps({
    "device": device, "count": tu.backend_device_count(device),
    "seeded": torch.equal(first, again), "reserved": torch.openreg.memory_reserved(),
    "synchronize": tu.backend_synchronize(device),
    "memory_allocated": tu.backend_memory_allocated(device),
}))
"""


def test_transformers_device_spec_is_read_by_testing_utils():
    """transformers' testing_utils imports tools/transformers_device_spec.py as its test suite
    does, and its backend_* functions then reach torch.openreg. TRANSFORMERS_TEST_DEVICE, if
    set, must name the same device; TRANSFORMERS_TEST_BACKEND imports the backend's module."""
    installed("transformers")
    run = run_python(SPEC_CHECK, env={**OFFLINE, "TRANSFORMERS_TEST_DEVICE_SPEC":
                                      "transformers_device_spec.py",
                                      "TRANSFORMERS_TEST_DEVICE": "openreg",
                                      "TRANSFORMERS_TEST_BACKEND": "torch_openreg"})
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout.splitlines()[-1])
    assert found["device"] == "openreg" and found["count"] == 2 and found["seeded"]
    assert found["reserved"] == 0  # EMPTY_CACHE_FN released the cached block
    # testing_utils reads no spec entry for these: openreg gets the tables' defaults
    assert found["synchronize"] is None and found["memory_allocated"] == 0


def test_transformers_device_spec_must_be_a_bare_file_name():
    """testing_utils imports the spec under the variable's value without '.py': a path with a
    directory in it is not a module name."""
    installed("transformers")
    code = SPEC_CHECK.replace('os.chdir("tools")', "")
    run = run_python(code, env={**OFFLINE, "TRANSFORMERS_TEST_DEVICE_SPEC":
                                "tools/transformers_device_spec.py"})
    assert run.returncode != 0
    assert "No module named 'tools/transformers_device_spec'" in run.stderr, run.stderr


# ---- torchvision and timm ------------------------------------------------------------------

TORCHVISION_FACTS = """
import json, sys
import torch
sys.path.insert(0, "examples")
from ecosystem_torchvision_schemas import compiled_ops_error, declare_torchvision_schemas
facts = {}
try:
    import torchvision
except RuntimeError as error:
    facts["plain import"] = str(error)
else:
    facts["plain import"] = "imported"
if facts["plain import"] != "imported":
    for name in [n for n in sys.modules if n.split(".")[0] == "torchvision"]:
        del sys.modules[name]  # the failed import left half-made modules behind
    facts["declared"] = declare_torchvision_schemas()
    import torchvision
facts["has_ops"] = torchvision.extension._has_ops()
facts["schemas"] = [str(torch.ops.torchvision.nms.default._schema),
                    str(torch.ops.torchvision.qnms.default._schema)]
features, rois = torch.rand(1, 2, 8, 8), torch.tensor([[0, 1.0, 1.0, 6.0, 5.0]])
cpu = torchvision.ops.roi_align(features, rois, output_size=2, sampling_ratio=2)
try:
    torchvision.ops.roi_align(features.to("openreg"), rois.to("openreg"), output_size=2,
                              sampling_ratio=2)
    facts["roi_align on openreg"] = "ran"
except RuntimeError as error:
    facts["roi_align on openreg"] = str(error).split(".")[0]
print(json.dumps(facts))
"""


@functools.cache
def torchvision_facts() -> dict:
    run = run_python(TORCHVISION_FACTS)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


def needs_broken_torchvision() -> None:
    installed("torchvision")
    if compiled_ops_error() is None:
        pytest.skip("torchvision's compiled operators load here: nothing to work around")


def test_cuda_torchvision_wheel_fails_to_import_beside_a_cpu_torch():
    """The compiled library needs CUDA's torch libraries; the import then fails registering
    a fake kernel for an operator nobody defined."""
    needs_broken_torchvision()
    assert "libc10_cuda.so" in compiled_ops_error()
    facts = torchvision_facts()
    assert facts["plain import"] == "operator torchvision::nms does not exist"


def test_the_workaround_declares_exactly_what_the_import_needs():
    needs_broken_torchvision()
    facts = torchvision_facts()
    assert facts["declared"] is True and facts["has_ops"] is False
    assert facts["schemas"] == [f"torchvision::{schema}" for schema in SCHEMAS]


def test_roi_align_has_no_python_path_on_openreg():
    """Without its compiled operators, torchvision's roi_align runs a Python version on the
    devices torch._dynamo's is_compile_supported names, and openreg is not one of them."""
    from torch._dynamo.utils import is_compile_supported

    assert is_compile_supported("cpu") and not is_compile_supported("openreg")
    needs_broken_torchvision()
    assert torchvision_facts()["roi_align on openreg"] == "Couldn't load custom C++ ops"


def test_transformers_imports_torchvision_whenever_it_is_installed():
    """With the wheel's compiled library missing, a transformers model class does not import."""
    needs_broken_torchvision()
    installed("transformers")
    plain = run_python("from transformers import GPT2LMHeadModel", env=OFFLINE)
    assert plain.returncode != 0 and "torchvision::nms does not exist" in plain.stderr
    # examples/ecosystem.py imports the same class after declare_torchvision_schemas()


KERNEL_ORDER = """
import sys
import torch
sys.path.insert(0, "examples")
calls = []

@torch.library.impl("torchvision::nms", "PrivateUse1")  # before torchvision's schema exists
def nms(dets, scores, iou_threshold):
    calls.append(dets.device.type)
    return scores.argsort(descending=True)

from ecosystem_torchvision_schemas import declare_torchvision_schemas
declare_torchvision_schemas()
import torchvision
boxes = torch.tensor([[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 2.0, 2.0]], device="openreg")
kept = torch.ops.torchvision.nms(boxes, torch.tensor([0.2, 0.9], device="openreg"), 0.5)
print(calls, kept.tolist())
"""


def test_a_kernel_may_register_before_torchvision_defines_the_operator():
    """The dispatcher keeps a kernel for a name it has no schema for yet, and pairs them later."""
    installed("torchvision")
    run = run_python(KERNEL_ORDER)
    assert run.stdout.split("\n")[0] == "['openreg'] [1, 0]", run.stderr


FALLBACK = """
import sys
import torch
sys.path.insert(0, "examples")
from ecosystem_torchvision_schemas import declare_torchvision_schemas
if declare_torchvision_schemas():  # no compiled CPU kernel here: stand in for it
    @torch.library.impl("torchvision::nms", "CPU")
    def nms(dets, scores, iou_threshold):
        return scores.argsort(descending=True)[:1]
import torchvision
boxes = torch.tensor([[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.1]])
scores = torch.tensor([0.2, 0.9])
expected = torch.ops.torchvision.nms(boxes, scores, 0.5)
kept = torch.ops.torchvision.nms(boxes.to("openreg"), scores.to("openreg"), 0.5)
print(kept.device, torch.equal(kept.cpu(), expected), torch.openreg.fallback_counts())
"""


def test_without_a_kernel_of_its_own_a_torchvision_operator_falls_back_to_the_cpu():
    installed("torchvision")
    run = run_python(FALLBACK)
    assert run.stdout.strip() == "openreg:0 True {'torchvision::nms': 1}", run.stderr
    assert "'torchvision::nms' is not implemented for openreg: it runs on the CPU" in run.stderr


def test_ecosystem_vision_example():
    """ecosystem_vision.py: the backend's nms kernel against a reference, and ResNet-18 and a
    timm ViT trained on openreg next to the CPU."""
    installed("torchvision", "timm")
    out = run_example("ecosystem_vision.py")
    reason = compiled_ops_error()
    lines(out, f"torchvision's compiled operators: {reason or 'loaded'}",
          f"schemas declared by the workaround: {reason is not None}",
          "ResNet-18 weights within 1e-3 of the CPU's: True",
          "timm ViT weights within 1e-3 of the CPU's: True")
    assert "boxes on openreg:0, the CPU reference's: True" in out
    for name in ("ResNet-18", "timm ViT"):
        cpu, dev = (line.split(":", 1)[1] for line in out.splitlines()
                    if line.startswith(f"{name} losses"))
        assert json.loads(cpu) == pytest.approx(json.loads(dev), abs=2e-3), out


# ---- libraries that list devices by name -------------------------------------------------


def test_ecosystem_device_lists_example():
    installed("safetensors", "accelerate")
    out = run_example("ecosystem_device_lists.py")
    lines(out, "load_file(device='openreg'): device openreg is invalid",
          "loaded to the CPU, then moved: ['openreg:0']", "loaded by index: ['openreg:1']",
          "the weights round-trip: True", "Accelerator().device: cpu",
          "prepare() moved the model to: cpu", "device_placement=False trains on: openreg:0",
          "the same weights as the CPU's: True")


def test_safetensors_refuses_device_names_it_does_not_list(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    path = tmp_path / "w.safetensors"
    st.save_file({"w": torch.arange(6.0, device="openreg")}, str(path))  # saving copies to CPU
    for device in ("openreg", "privateuseone", "openreg:0"):
        with pytest.raises(Exception, match=f"device {device} is invalid"):
            st.load_file(str(path), device=device)
        with pytest.raises(Exception, match=f"device {device} is invalid"):
            st.safe_open(str(path), framework="pt", device=device)
    w = st.load_file(str(path))["w"].to("openreg")
    assert w.device.type == "openreg" and torch.equal(w.cpu(), torch.arange(6.0))
    assert torch.device(1) == torch.device("openreg", 1)  # why device=1 reaches openreg
    assert st.load_file(str(path), device=1)["w"].device == torch.device("openreg", 1)


def test_accelerate_does_not_list_openreg():
    accelerate = pytest.importorskip("accelerate")
    accelerator = accelerate.Accelerator()
    assert accelerator.device == torch.device("cpu")
    model = torch.nn.Linear(2, 2).to("openreg")
    assert next(accelerator.prepare(model).parameters()).device.type == "cpu"
    keep = accelerate.Accelerator(device_placement=False)
    model = torch.nn.Linear(2, 2).to("openreg")
    assert next(keep.prepare(model).parameters()).device.type == "openreg"


# ---- PyTorch's own libraries ---------------------------------------------------------------


def test_ecosystem_torch_apis_example():
    out = run_example("ecosystem_torch_apis.py")
    lines(out, "exported weights on: ['openreg:0']", "exported program equals the CPU model: True",
          "per-sample gradients equal the CPU's: True", "jacrev equals the CPU's: True",
          "checkpointed dropout replays the device's generator: True",
          "checkpointed gradients equal the CPU's: True", "every batch pinned: True",
          "trained weights equal the CPU's: True")

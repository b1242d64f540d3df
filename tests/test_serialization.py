"""torch.save/torch.load on openreg, map_location, backend metadata, storages.

Covers the chapter "Serialization and storage": SERIALIZATION_BACKEND_META_TYPE,
SERIALIZATION_FORMAT_ACCESS, SERIALIZATION_BACKEND_META_REGISTRY, SERIALIZATION_STORAGE_BOUNDS,
HOOKS_RESIZE_STORAGE, and the example examples/serialization.py.
"""

import copy
import io
import pickle
import warnings

import pytest
import torch
from conftest import ROOT, run_python


def roundtrip(obj, **load_kwargs):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, **load_kwargs)


def saved_on_device_1(tmp_path):
    path = tmp_path / "t.pt"
    torch.save({"w": torch.arange(6.0, device="openreg:1").view(2, 3)}, path)
    return path


class TestSaveLoad:
    def test_tensor_keeps_device_dtype_values_and_views(self):
        base = torch.arange(12, dtype=torch.float64, device="openreg:1")
        view = base.view(3, 4)[1:, ::2]
        a, b = roundtrip([base, view])
        assert a.device == torch.device("openreg:1") and a.dtype == torch.float64
        assert b.tolist() == view.tolist() and b.stride() == view.stride()
        assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()  # still one storage

    def test_module_optimizer_checkpoint(self):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                                    torch.nn.Linear(4, 1)).to("openreg")
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for _ in range(2):
            opt.zero_grad()
            model(torch.randn(5, 3, device="openreg")).pow(2).mean().backward()
            opt.step()
        ckpt = roundtrip({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 2},
                         weights_only=True)
        model2 = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                                     torch.nn.Linear(4, 1)).to("openreg")
        opt2 = torch.optim.SGD(model2.parameters(), lr=0.1, momentum=0.9)
        model2.load_state_dict(ckpt["model"])
        opt2.load_state_dict(ckpt["opt"])
        assert opt2.state_dict()["state"][0]["momentum_buffer"].device.type == "openreg"
        x = torch.randn(5, 3, device="openreg")
        for m, o in ((model, opt), (model2, opt2)):  # the same next step from the same state
            o.zero_grad()
            m(x).pow(2).mean().backward()
            o.step()
        for p, q in zip(model.parameters(), model2.parameters()):
            assert torch.equal(p, q)

    def test_whole_module_with_weights_only_false(self):
        model = torch.nn.Linear(2, 2).to("openreg")
        back = roundtrip(model, weights_only=False)
        assert back.weight.device.type == "openreg" and torch.equal(back.bias, model.bias)

    def test_weights_only_refuses_arbitrary_objects(self):
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            roundtrip({"f": torch.nn.Linear(1, 1).to("openreg")}, weights_only=True)


class TestMapLocation:
    @pytest.mark.parametrize(
        "where, expected",
        [
            ("cpu", "cpu"),
            ("openreg:0", "openreg:0"),
            (torch.device("openreg:0"), "openreg:0"),
            ({"openreg:1": "openreg:0"}, "openreg:0"),
            ({"openreg:1": "cpu"}, "cpu"),
            (lambda storage, location: storage, "cpu"),  # a callable gets CPU storages
            (lambda storage, location: storage.openreg(0), "openreg:0"),
        ],
    )
    def test_every_form(self, tmp_path, where, expected):
        w = torch.load(saved_on_device_1(tmp_path), map_location=where, weights_only=True)["w"]
        assert str(w.device) == expected and w.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]

    def test_cpu_checkpoint_to_openreg(self):
        w = roundtrip(torch.ones(3), map_location="openreg:1")
        assert w.device == torch.device("openreg:1")

    def test_bad_device_index_is_a_clear_error(self, tmp_path):
        with pytest.raises(RuntimeError,
                           match=r"OPENREG device 5 but torch.openreg.device_count\(\) is 2"):
            torch.load(saved_on_device_1(tmp_path), map_location="openreg:5")


class TestBackendMeta:
    def test_default_is_plain_and_adds_no_metadata(self):
        t = torch.ones(2, device="openreg")
        assert torch.openreg.internal_format(t) == "plain"
        assert torch._utils.get_tensor_metadata(t) == {}

    def test_survives_save_and_load(self):
        t = torch.randn(4, 4, device="openreg")
        torch.openreg.set_internal_format(t, "blocked")
        back = roundtrip(t)
        assert torch.openreg.internal_format(back) == "blocked" and torch.equal(back, t)
        assert torch._utils.get_tensor_metadata(back) == {"openreg_format_blocked": True}

    def test_survives_state_dict_checkpoint(self):
        model = torch.nn.Linear(3, 3).to("openreg")
        torch.openreg.set_internal_format(model.weight, "tiled")
        sd = roundtrip(model.state_dict(), weights_only=True)
        assert torch.openreg.internal_format(sd["weight"]) == "tiled"
        assert torch.openreg.internal_format(sd["bias"]) == "plain"

    def test_set_tensor_metadata_and_copies(self):
        t = torch.zeros(3, device="openreg")
        torch._utils.set_tensor_metadata(t, {"openreg_format_tiled": True})
        assert torch.openreg.internal_format(t) == "tiled"
        d = t.detach()
        assert torch.openreg.internal_format(d) == "tiled"
        torch.openreg.set_internal_format(d, "blocked")  # the copy owns its attribute
        assert torch.openreg.internal_format(t) == "tiled"
        assert torch.openreg.internal_format(torch.nn.Parameter(t)) == "tiled"

    def test_deepcopy_keeps_it(self):
        """Tensor.__deepcopy__ (wrapped by the backend), a Parameter's deepcopy (clone), and a
        module's: each copy owns an attribute of its own."""
        t = torch.arange(3.0, device="openreg")
        torch.openreg.set_internal_format(t, "tiled")
        c = copy.deepcopy(t)
        assert c.tolist() == t.tolist() and c.device == t.device
        assert c.untyped_storage().data_ptr() != t.untyped_storage().data_ptr()
        assert torch.openreg.internal_format(c) == "tiled"
        torch.openreg.set_internal_format(c, "blocked")
        assert torch.openreg.internal_format(t) == "tiled"
        assert torch.openreg.internal_format(t.clone()) == "tiled"
        model = torch.nn.Linear(2, 2).to("openreg")
        torch.openreg.set_internal_format(model.weight, "blocked")
        twin = copy.deepcopy(model)
        assert isinstance(twin.weight, torch.nn.Parameter)
        assert torch.openreg.internal_format(twin.weight) == "blocked"
        assert torch.openreg.internal_format(twin.bias) == "plain"
        assert (torch.openreg.internal_format(copy.deepcopy(torch.ones(2, device="openreg")))
                == "plain")
        shared = [t, t]
        twins = copy.deepcopy(shared)
        assert twins[0] is twins[1]  # the memo still works through the wrapper

    def test_conj_and_format_together(self):
        t = torch.tensor([1 + 2j], device="openreg").conj()
        torch.openreg.set_internal_format(t, "tiled")
        assert torch._utils.get_tensor_metadata(t) == {"conj": True, "openreg_format_tiled": True}
        back = roundtrip(t)
        assert back.is_conj() and torch.openreg.internal_format(back) == "tiled"

    def test_cpu_load_ignores_it(self):
        t = torch.ones(2, device="openreg")
        torch.openreg.set_internal_format(t, "tiled")
        assert roundtrip(t, map_location="cpu").device.type == "cpu"

    def test_bad_input(self):
        t = torch.ones(2, device="openreg")
        with pytest.raises(ValueError, match="unknown openreg internal format 'zigzag'"):
            torch.openreg.set_internal_format(t, "zigzag")
        with pytest.raises(ValueError, match="unknown openreg internal format 'zigzag'"):
            torch._utils.set_tensor_metadata(t, {"openreg_format_zigzag": True})
        with pytest.raises(RuntimeError, match="attribute of openreg tensors"):
            torch.openreg.set_internal_format(torch.ones(2), "tiled")


class TestStorages:
    def test_untyped_and_typed(self):
        t = torch.arange(4, dtype=torch.int32, device="openreg:1")
        s = t.untyped_storage()
        assert s.device == torch.device("openreg:1") and s.nbytes() == 16 and s.is_openreg
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "TypedStorage is deprecated" (once per process)
            typed = t.storage()
        assert typed.dtype == torch.int32 and typed.device == t.device and typed.is_openreg
        assert typed.tolist() == [0, 1, 2, 3]

    def test_openreg_method_and_copy(self):
        cpu = torch.UntypedStorage(8).fill_(3)
        dev = cpu.openreg()
        assert dev.device == torch.device("openreg:0") and dev.is_openreg and not cpu.is_openreg
        assert cpu.openreg(1).device == torch.device("openreg:1")
        assert dev.openreg() is dev  # already there
        other = torch.UntypedStorage(8, device="openreg").copy_(dev)
        assert other.cpu().tolist() == [3] * 8

    def test_resize_grow_and_shrink(self):
        t = torch.arange(4.0, device="openreg")
        s = t.untyped_storage()
        s.resize_(32)
        assert s.nbytes() == 32
        assert torch.tensor([], device="openreg").set_(s)[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
        s.resize_(8)
        assert torch.tensor([], device="openreg").set_(s).tolist() == [0.0, 1.0]

    def test_using_a_tensor_whose_storage_shrank(self):
        t = torch.ones(4, device="openreg")
        t.untyped_storage().resize_(0)
        message = r"setStorage: sizes \[4\], strides \[1\], storage offset 0, and itemsize 4 " \
                  r"requiring a storage size of 16 are out of bounds for storage of size 0"
        # Kernels that hand raw pointers to the device (clone's copy, zero_, cat, isfinite, item)
        # run the check themselves; clone crashed the process before it did.
        for use in (lambda: print(t), lambda: t.cpu(), lambda: t + 1, lambda: t.sum(),
                    lambda: torch.ones(4).copy_(t), lambda: t.copy_(torch.ones(4)),
                    lambda: t.clone(), lambda: t.zero_(), lambda: torch.cat([t, t]),
                    lambda: torch.isfinite(t)):
            with pytest.raises(RuntimeError, match=message):
                use()
        with pytest.raises(RuntimeError, match=r"sizes \[\].* out of bounds for storage of size 0"):
            t[0].item()
        t.untyped_storage().resize_(16)  # grown back: usable again (contents undefined)
        assert t.fill_(2).tolist() == [2.0] * 4

    def test_share_memory_is_a_no_op_like_cuda(self):
        s = torch.ones(2, device="openreg").untyped_storage()
        assert s.is_shared() and s.share_memory_() is s

    def test_pickling_storage_and_tensor(self):
        # Typed storages pickle (an UntypedStorage does not, on the CPU either, in torch 2.13).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = torch.arange(3.0, device="openreg:1").storage()
        back = pickle.loads(pickle.dumps(s))
        assert back.device == torch.device("openreg:1") and back.tolist() == [0.0, 1.0, 2.0]
        t = pickle.loads(pickle.dumps(torch.arange(3.0, device="openreg:1")))
        assert t.device == torch.device("openreg:1") and t.tolist() == [0.0, 1.0, 2.0]


def test_example_runs():
    result = run_python((ROOT / "examples" / "serialization.py").read_text(), timeout=180)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "weight on openreg:1 | Adam state on openreg:1" in out
    assert "restored equals saved: True" in out
    for line in ("map_location=str       -> cpu", "map_location=device    -> openreg:0",
                 "map_location=dict      -> openreg:0", "map_location=function  -> openreg:0"):
        assert line in out
    # Fewer devices (one) or none, in subprocesses: PyTorch's errors name map_location, and
    # "cpu" (or a dict onto a device that exists) loads.
    one, none = (out.split("{'OPENREG_DEVICE_COUNT': '1'}\n")[1]
                 .split("{'OPENREG_VISIBLE_DEVICES': ''}\n"))
    assert ("map_location=None: RuntimeError: Attempting to deserialize object on OPENREG device 1 "
            "but torch.openreg.device_count() is 1. Please use torch.load with map_location") in one
    assert ("map_location=cpu: cpu" in one
            and "map_location={'openreg:1': 'openreg:0'}: openreg:0" in one)
    assert ("map_location=None: RuntimeError: Attempting to deserialize object on a OPENREG device "
            "but torch.openreg.is_available() is False") in none
    assert "map_location=cpu: cpu" in none
    assert "metadata: {'openreg_format_tiled': True}" in out
    assert "after save/load: tiled | detach(): tiled | on the CPU: {}" in out
    assert "after resize_(32): [0.0, 1.0, 2.0, 3.0]" in out
    assert "using a tensor whose storage was shrunk: setStorage: sizes [4]" in out

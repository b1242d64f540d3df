"""The CPU fallback: observable (warn once, counters, report), controllable (strict mode), and
refused for the operator kinds it cannot serve correctly (views, factories, random numbers)."""

import textwrap

import pytest
import torch

from conftest import run_example, run_python

# Operators with only a CPU kernel, which on openreg reach the fallback: a view, a random
# operator and a factory, the three kinds it refuses.
_views = torch.library.Library("openreg_tests", "DEF")
_views.define("alias_of(Tensor(a) x) -> Tensor(a)")
_views.impl("alias_of", lambda x: x.view(x.shape), "CPU")
_views.define("noisy(Tensor x, *, Generator? generator=None) -> Tensor")
_views.impl("noisy", lambda x, generator=None: x + torch.rand(x.shape, generator=generator), "CPU")


def test_warns_once_per_operator_and_counts_every_call():
    code = textwrap.dedent("""
        import warnings, torch
        x = torch.tensor([1.0, -2.0, 0.0], device="openreg")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            for _ in range(3):
                torch.cummax(x, 0)
            torch.logaddexp(x, x)
        print(len([w for w in seen if "aten::_cummax_helper" in str(w.message)]),
              len([w for w in seen if "aten::logaddexp" in str(w.message)]))
        print(torch.openreg.fallback_counts())
        print(torch.openreg.fallback_report())
    """)
    out = run_python(code).stdout.splitlines()
    assert out[0] == "1 1"
    assert out[1] == "{'aten::_cummax_helper': 3, 'aten::logaddexp': 1}"
    assert out[2].split() == ["operator", "calls"]
    assert ["aten::_cummax_helper", "3"] in [line.split() for line in out[3:]]


def test_results_are_correct_on_the_fallback():
    x = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    values, indices = torch.cummax(x.to("openreg"), 0)
    assert torch.equal(values.cpu(), torch.cummax(x, 0).values)
    assert torch.equal(indices.cpu(), torch.cummax(x, 0).indices)


def test_strict_mode_raises_naming_the_operator():
    code = ("import torch\n"
            "x = torch.ones(3, device='openreg')\n"
            "print((x + 1).sum().item())\n"  # native operators still work
            "torch.cummax(x, 0)\n")
    result = run_python(code, env={"OPENREG_STRICT_FALLBACK": "1"})
    assert result.stdout.strip() == "6.0"
    assert "NotImplementedError" in result.stderr
    assert ("'aten::_cummax_helper' is not implemented for openreg and OPENREG_STRICT_FALLBACK=1"
            in result.stderr)


@pytest.mark.parametrize("call, reason", [
    (lambda: torch.from_file(__file__, size=2, device="openreg"), "creates tensors from nothing"),
    (lambda: torch.ops.openreg_tests.noisy(torch.ones(3, device="openreg")),
     "draws random numbers"),
    (lambda: torch.ops.openreg_tests.alias_of(torch.ones(4, device="openreg")), "returns a view"),
])
def test_operator_kinds_that_cannot_fall_back(call, reason):
    with pytest.raises(NotImplementedError,
                       match="is not implemented for openreg, and cannot fall back to the CPU: "
                             f"it {reason}"):
        call()


def test_refusal_is_computed_from_the_schema():
    from torch_openreg import _C

    assert _C._why_no_fallback("aten::unfold", "").startswith("it returns a view")
    assert _C._why_no_fallback("aten::randperm", "").startswith("it creates tensors")
    assert _C._why_no_fallback("aten::poisson", "").startswith("it draws random numbers")
    assert _C._why_no_fallback("aten::_cummax_helper", "") == ""


def test_fallback_example():
    out = run_example("fallback.py")
    assert "2 warnings for 4 fallbacks, first: 'aten::_cummax_helper'" in out
    assert "strict mode: NotImplementedError: 'aten::_cummax_helper' is not implemented" in out
    assert "refused: 'aten::from_file' is not implemented for openreg" in out


def test_a_cpu_scalar_is_never_a_written_argument():
    x = torch.tensor([1.0, 0.0, 2.0], device="openreg")
    with pytest.raises(RuntimeError, match="same device"):
        torch.nonzero(x, out=torch.empty([], dtype=torch.long))
    assert (x + torch.tensor(1.0)).cpu().tolist() == [2.0, 1.0, 3.0]  # as an input it may join

"""The operator coverage report, read from the dispatcher."""

import re
import sys

import torch

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import op_coverage  # noqa: E402


def test_known_operators_are_classified():
    assert op_coverage.classify("aten::add.Tensor") == ("openreg kernel", "OpenRegNative.cpp")
    assert op_coverage.classify("aten::tan")[0] == "borrowed kernel"
    assert op_coverage.classify("aten::sin") == ("openreg kernel", "OpenRegPointwise.cpp")
    assert op_coverage.classify("aten::selu") == ("composite", "implicit")
    assert op_coverage.classify("aten::abs") == ("openreg kernel", "OpenRegPointwise.cpp")
    assert op_coverage.classify("aten::amax") == ("openreg kernel", "OpenRegReduce.cpp")
    assert op_coverage.classify("aten::cumsum") == ("openreg kernel", "OpenRegReduce.cpp")
    assert op_coverage.classify("aten::cumsum.out")[0] == "borrowed kernel"
    assert op_coverage.classify("aten::zeros_like") == ("composite", "explicit")
    assert op_coverage.classify("aten::_cummax_helper")[0] == "CPU fallback"
    assert op_coverage.classify("aten::logaddexp")[0] == "CPU fallback"
    assert "quantized" in op_coverage.classify("aten::quantize_per_tensor")[1]
    assert op_coverage.classify("aten::from_file")[0] == "refused"
    assert op_coverage.classify("aten::tril_indices")[0] == "openreg kernel"
    assert op_coverage.classify("aten::_cudnn_rnn")[0] in ("unsupported", "refused")


def test_report_counts_every_aten_operator():
    result = op_coverage.coverage()
    text = op_coverage.markdown(result)
    assert text.startswith("# Operator coverage")
    counts = {c: len(v) for c, v in result.items()}
    assert counts["borrowed kernel"] > 300 and counts["composite"] > 1500
    assert sum(counts.values()) == sum(
        1 for n in __import__("torch")._C._dispatch_get_all_op_names() if n.startswith("aten::"))


def test_per_operator_fallbacks_match_the_registrations():
    """The operators registered with the CPU fallback as their kernel are exactly the tool's set,
    and each of them really runs through the counted fallback."""
    registered = set()
    for path in (ROOT / "csrc").rglob("*.cpp"):
        for name in re.findall(r'm\.impl\("([\w.]+)",\s*torch::CppFunction::makeFromBoxedFunction'
                               r"<&cpu_fallback>", path.read_text()):
            registered.add("aten::" + name)
    assert registered == op_coverage.PER_OPERATOR_FALLBACKS
    x = torch.ones(3, device="openreg")
    torch.openreg.reset_fallback_counts()
    torch.logaddexp(x, x)
    assert torch.openreg.fallback_counts().get("aten::logaddexp") == 1

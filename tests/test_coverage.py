"""The operator coverage report, read from the dispatcher."""

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import op_coverage  # noqa: E402


def test_known_operators_are_classified():
    assert op_coverage.classify("aten::add.Tensor") == ("openreg kernel", "OpenRegNative.cpp")
    assert op_coverage.classify("aten::tan")[0] == "borrowed kernel"
    assert op_coverage.classify("aten::sin") == ("openreg kernel", "Pointwise.cpp")
    assert op_coverage.classify("aten::selu") == ("composite", "implicit")
    assert op_coverage.classify("aten::abs") == ("openreg kernel", "Pointwise.cpp")
    assert op_coverage.classify("aten::amax") == ("openreg kernel", "Reduce.cpp")
    assert op_coverage.classify("aten::cumsum") == ("openreg kernel", "Reduce.cpp")
    assert op_coverage.classify("aten::cumsum.out")[0] == "borrowed kernel"
    assert op_coverage.classify("aten::zeros_like") == ("composite", "explicit")
    assert op_coverage.classify("aten::_cummax_helper")[0] == "CPU fallback"
    assert op_coverage.classify("aten::tril_indices")[0] == "refused"
    assert op_coverage.classify("aten::_cudnn_rnn")[0] in ("unsupported", "refused")


def test_report_counts_every_aten_operator():
    result = op_coverage.coverage()
    text = op_coverage.markdown(result)
    assert text.startswith("# Operator coverage")
    counts = {c: len(v) for c, v in result.items()}
    assert counts["borrowed kernel"] > 300 and counts["composite"] > 1500
    assert sum(counts.values()) == sum(1 for n in __import__("torch")._C._dispatch_get_all_op_names()
                                       if n.startswith("aten::"))

"""Sphinx configuration of the torch_openreg integration guide."""

import os
import sys
from pathlib import Path

DOCS = Path(__file__).parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent / "tools"))
# The guide runs examples while it builds; they must see the installed backend.
os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "1")

project = "torch_openreg"
author = "the torch_openreg developers"
copyright = "2026, the torch_openreg developers"

extensions = [
    "myst_parser",
    "sphinx_tabs.tabs",
    "sphinx_copybutton",
    "sphinx.ext.graphviz",
    "listing",
    "run_example",
    "example_figure",
    "text_export",
]
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_generated"]

html_theme = "furo"
html_title = "torch_openreg: bringing a new accelerator to PyTorch"
graphviz_output_format = "svg"
sphinx_tabs_disable_tab_closing = True
copybutton_exclude = ".linenos, .gp"


def _generate_op_coverage(app) -> None:
    """Writes op-coverage.md from the installed torch's dispatcher before pages are read."""
    import op_coverage

    op_coverage.main(["--output", str(DOCS / "op-coverage.md")])


def _generate_opinfo_report(app) -> None:
    """Writes opinfo-report.md from the committed sweep report (the sweep is not rerun)."""
    import opinfo_report

    opinfo_report.main(["--output", str(DOCS / "opinfo-report.md")])


def _generate_pytorch_tests(app) -> None:
    """Writes the testing chapter's table of PyTorch's own test files from the committed report."""
    import pytorch_tests

    (DOCS / "_generated").mkdir(exist_ok=True)
    pytorch_tests.main(["--render", str(DOCS / "_generated" / "pytorch-tests.md")])


def _generate_performance(app) -> None:
    """Writes performance.md from the latest results the benchmarks wrote (benchmarks/results)."""
    import results

    results.main(["--output", str(DOCS / "performance.md")])


def setup(app):
    app.connect("builder-inited", _generate_op_coverage)
    app.connect("builder-inited", _generate_opinfo_report)
    app.connect("builder-inited", _generate_pytorch_tests)
    app.connect("builder-inited", _generate_performance)

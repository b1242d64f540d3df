"""Sphinx configuration of the torch_openreg integration guide."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))
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
    "run_example",
]
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]

html_theme = "furo"
html_title = "torch_openreg: bringing a new accelerator to PyTorch"
graphviz_output_format = "svg"
sphinx_tabs_disable_tab_closing = True
copybutton_exclude = ".linenos, .gp"

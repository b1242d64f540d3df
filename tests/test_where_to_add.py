"""Where to add what (docs/where-to-add.md): every path, file and name the page gives is real, and
each recipe works on a scratch copy (a component with bindings, a package, a chapter)."""

import re
import subprocess
import sys
import tomllib

import pytest
import torch
from setuptools import find_packages

from conftest import ROOT
from test_build import _configure, _scratch_copy

PAGE = (ROOT / "docs" / "where-to-add.md").read_text()
MUST_NOT_EXIST = {"examples/random.py"}  # the page's example of a name never to use


def named_paths() -> list[str]:
    """Backticked repository paths on the page, without placeholders like <name>."""
    found = []
    for token in re.findall(r"`([^`\s]+)`", PAGE):
        if "<" in token or "*" in token or token.startswith(("-", ".")):
            continue
        if "/" in token or token.endswith((".md", ".py", ".toml", ".cpp", ".h")):
            found.append(token.split("::")[0])
    return sorted(set(found))


def resolve(token: str):
    if "/" in token:
        return ROOT / token
    folder = "docs" if token.endswith(".md") else "examples" if token.endswith(".py") else ""
    return ROOT / folder / token


def test_named_paths_exist():
    paths = named_paths()
    assert "csrc/runtime/OpenRegLaunch.h" in paths and "random-numbers.md" in paths  # parsed
    missing = [p for p in paths if p not in MUST_NOT_EXIST and not resolve(p).exists()]
    assert missing == []
    assert all(not resolve(p).exists() for p in MUST_NOT_EXIST)


@pytest.mark.parametrize("name, where", [
    ("void launch_kernel(", "csrc/runtime/OpenRegLaunch.h"),
    ("#define OPENREG_BINDINGS(component, bind)", "torch_openreg/csrc/Bindings.h"),
    ("void bind_all(", "torch_openreg/csrc/Bindings.h"),
    ("REGISTER_PRIVATEUSE1_DISPATCH(abs_stub", "csrc/aten/OpenRegRegistrationPaths.cpp"),
    ("constexpr const char* kBorrowed[]", "csrc/aten/OpenRegBorrowed.cpp"),
    ("TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)", "csrc/aten/OpenRegNative.cpp"),
    ("file(GLOB_RECURSE OPENREG_CORE_SOURCES", "csrc/CMakeLists.txt"),
    ("file(GLOB_RECURSE OPENREG_BINDING_SOURCES", "torch_openreg/csrc/CMakeLists.txt"),
    ("[tool.setuptools.packages.find]", "pyproject.toml"),
    ("def run_example(", "tests/conftest.py"),
    ('app.add_directive("run-example"', "docs/_ext/run_example.py"),
    ('ALIASES = {"index": "quickstart"}', "tools/check_anchors.py"),
])
def test_named_identifiers_exist(name, where):
    assert name in (ROOT / where).read_text()


def registered_from(op: str) -> str:
    dump = torch._C._dispatch_dump(op)
    line = next(entry for entry in dump.splitlines() if entry.startswith("PrivateUse1"))
    return line.split("registered at ")[-1]


@pytest.mark.parametrize("op, file", [
    ("aten::abs.out", "OpenRegRegistrationPaths.cpp"),  # the stub path
    ("aten::mm", "OpenRegNative.cpp"),                  # hand-written
    ("aten::tan", "OpenRegBorrowed.cpp"),               # borrowed
])
def test_each_kernel_path_is_registered(op, file):
    assert file in registered_from(op)


def test_a_new_component_with_bindings_is_built_by_the_globs(tmp_path):
    tree = _scratch_copy(tmp_path)
    (tree / "csrc" / "widget").mkdir()
    (tree / "csrc" / "widget" / "README.md").write_text("# widget: made by a test\n")
    (tree / "csrc" / "widget" / "OpenRegWidget.cpp").write_text(
        "int openreg_widget() { return 1; }\n")
    (tree / "torch_openreg" / "csrc" / "widget").mkdir()
    (tree / "torch_openreg" / "csrc" / "widget" / "WidgetBindings.cpp").write_text(
        '#include "../Bindings.h"\n'
        "namespace torch_openreg {\n"
        'void bind_widget(py::module_& m) { m.def("_widget", [] { return 1; }); }\n'
        "OPENREG_BINDINGS(widget, bind_widget);\n"
        "}  // namespace torch_openreg\n")
    result = _configure(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    links = {}
    for line in (tree / "build" / "build.ninja").read_text().splitlines():
        for lib in ("libtorch_openreg.so", "libtorch_bindings.so"):
            if line.startswith("build ") and f"{lib}:" in line and "_LINKER" in line:
                links[lib] = line
    assert "widget/OpenRegWidget.cpp.o" in links["libtorch_openreg.so"]
    assert "widget/WidgetBindings.cpp.o" in links["libtorch_bindings.so"]


def test_a_new_package_is_discovered(tmp_path):
    rule = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    for package in ("torch_openreg", "torch_openreg/openreg", "torch_openreg/openreg/widget"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "__init__.py").write_text("")
    found = find_packages(str(tmp_path), **rule["find"])
    assert "torch_openreg.openreg.widget" in found


def test_a_new_chapter_needs_its_test_and_example_test(tmp_path):
    checker = ROOT / "tools" / "check_anchors.py"
    for folder in ("docs", "examples", "tests"):
        (tmp_path / folder).mkdir()
    (tmp_path / "docs" / "widgets.md").write_text(
        "# Widgets\n\n```{run-example} ../examples/widgets.py\n```\n")
    (tmp_path / "examples" / "widgets.py").write_text("print('a widget')\n")

    def check() -> str:
        return subprocess.run([sys.executable, str(checker), "--root", str(tmp_path)],
                              capture_output=True, text=True).stdout

    assert "[chapter-test] the chapter has no tests/test_widgets.py" in check()
    (tmp_path / "tests" / "test_widgets.py").write_text("def test_nothing():\n    pass\n")
    out = check()
    assert "[example-test] widgets.py belongs to widgets.md, but tests/test_widgets.py" in out
    assert "[example-untested] widgets.py" in out
    (tmp_path / "tests" / "test_widgets.py").write_text(
        "from conftest import run_example\n\n\ndef test_widgets_example():\n"
        "    assert 'a widget' in run_example('widgets.py')\n")
    assert check().strip() == "anchors OK"

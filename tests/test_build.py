"""The build (docs/build.md): component folders picked up by the globs, layers that only call
down."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_example

LIB = ROOT / "torch_openreg" / "lib"


def test_bindings_never_call_the_driver():
    """libtorch_bindings reaches the device only through libtorch_openreg's runtime."""
    undefined = subprocess.run(["nm", "-D", "--undefined-only", str(LIB / "libtorch_bindings.so")],
                               capture_output=True, text=True, check=True).stdout
    driver_calls = [line.split()[-1] for line in undefined.splitlines()
                    if line.split()[-1].startswith("or") and line.split()[-1][2:3].isupper()]
    assert driver_calls == []
    # ...while the backend does call it: the check above would see them if they were there.
    backend = subprocess.run(["nm", "-D", "--undefined-only", str(LIB / "libtorch_openreg.so")],
                             capture_output=True, text=True, check=True).stdout
    assert " orMalloc" in backend


def _scratch_copy(tmp_path: Path) -> Path:
    """The tracked build inputs (CMake files and sources) copied to a scratch tree."""
    files = subprocess.run(["git", "ls-files", "CMakeLists.txt", "cmake", "csrc", "third_party",
                            "benchmarks/handoff.cpp",
                            "torch_openreg/csrc"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    tree = tmp_path / "src"
    for name in files:
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tree / name)
    return tree


def _configure(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["cmake", "-S", str(tree), "-B", str(tree / "build"), "-G", "Ninja",
                           f"-DPython3_EXECUTABLE={sys.executable}",
                           # one object a source file, so the build lists each file's object
                           "-DOPENREG_UNITY_BUILD=OFF"],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def scratch(tmp_path):
    tree = _scratch_copy(tmp_path)
    component = tree / "csrc" / "scratch"
    component.mkdir()
    (component / "README.md").write_text("# scratch: a component made by a test\n")
    (component / "Scratch.cpp").write_text('extern "C" int openreg_scratch() { return 42; }\n')
    return tree


def test_new_component_folder_is_built_without_editing_a_build_file(scratch):
    result = _configure(scratch)
    assert result.returncode == 0, result.stdout + result.stderr
    ninja = (scratch / "build" / "build.ninja").read_text()
    assert "torch_openreg.dir/scratch/Scratch.cpp.o" in ninja
    # The object is an input of libtorch_openreg's link step.
    link = next(line for line in ninja.splitlines()
                if line.startswith("build ") and "libtorch_openreg.so:" in line
                and "_LINKER" in line)
    assert "scratch/Scratch.cpp.o" in link


def test_a_source_the_build_would_skip_is_refused(scratch):
    (scratch / "csrc" / "scratch" / "kernel.cc").write_text("int f() { return 1; }\n")
    result = _configure(scratch)
    assert result.returncode != 0
    assert "sources this build does not compile: scratch/kernel.cc" in result.stderr


def test_a_component_without_readme_is_refused(scratch):
    (scratch / "csrc" / "scratch" / "README.md").unlink()
    result = _configure(scratch)
    assert result.returncode != 0
    assert "component folder csrc/scratch has no README.md" in result.stderr


def test_build_example():
    out = run_example("build.py")
    assert "loads libtorch_bindings.so" in out
    assert "libtorch_bindings.so                       loads libtorch_openreg.so\n" in out
    assert "libtorch_openreg.so                        loads libopenreg.so" in out
    assert "libopenreg.so                              loads (no openreg library)" in out

"""Style: the Python is ruff-clean and the C and C++ follow the checked-in .clang-format.

Both tools are pinned in the test extra (pyproject.toml), so every machine checks against the same
rules. To fix what these tests report: `ruff check --fix .` and
`git ls-files '*.c' '*.cpp' '*.h' | xargs clang-format -i`.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


def tracked(*patterns: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout: the tracked files are unknown")
    return out.stdout.split()


def test_python_is_ruff_clean():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_cpp_follows_clang_format():
    # The test extra's pinned clang-format sits beside this interpreter; a system one may differ.
    beside = Path(sys.executable).parent / "clang-format"
    clang_format = str(beside) if beside.exists() else shutil.which("clang-format")
    assert clang_format, "clang-format is missing: install the test extra"
    files = tracked("*.c", "*.cpp", "*.h")
    assert len(files) > 50
    result = subprocess.run([clang_format, "--dry-run", "--Werror", *files], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-5000:]

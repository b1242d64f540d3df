"""Shared helpers: the repository root and running Python snippets in fresh processes."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_python(code: str, env: dict | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    """Runs `code` in a new interpreter (fresh device state, its own environment)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full_env, timeout=timeout, cwd=ROOT)


@pytest.fixture
def python():
    return run_python

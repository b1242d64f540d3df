"""Autoload: the torch.backends entry point, and TORCH_DEVICE_BACKEND_AUTOLOAD=0."""

from conftest import run_python


def test_entry_point_is_registered():
    code = (
        "from importlib.metadata import entry_points\n"
        "print([e.value for e in entry_points(group='torch.backends')"
        " if e.name == 'torch_openreg'])"
    )
    assert "torch_openreg:_autoload" in run_python(code).stdout


def test_autoload_can_be_disabled():
    code = (
        "import sys, torch\n"
        "print('loaded' if 'torch_openreg' in sys.modules else 'not loaded')\n"
        "import torch_openreg\n"
        "print(torch.ones(1, device='openreg').device)\n"
    )
    result = run_python(code, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["not", "loaded", "openreg:0"]


def test_device_module_is_lazily_initialized():
    code = (
        "import torch\n"
        "print(torch.openreg.is_initialized())\n"
        "torch.ones(1, device='openreg')\n"
        "print(torch.openreg.is_initialized())\n"
    )
    assert run_python(code).stdout.split() == ["False", "True"]


def test_importing_the_package_before_torch_works():
    """torch autoloads torch_openreg while torch_openreg is itself importing torch."""
    code = "import torch_openreg\nimport torch\nprint(torch.ones(1, device='openreg').device)\n"
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "openreg:0"

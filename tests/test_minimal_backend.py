"""The smallest backend that works (docs/minimal-backend.md): built from the chapter's listings
alone, run in its own environment, and kept apart from openreg.

The example assembles and builds the backend once; the build is cached under
build/minimal_backend/, so the other tests here (and the guide) reuse it.
"""

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT, run_example

NAME = "mydev"


def example_module():
    spec = importlib.util.spec_from_file_location("minimal_backend_example",
                                                  ROOT / "examples" / "minimal_backend.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def example_output():
    return run_example("minimal_backend.py", timeout=900)


@pytest.fixture(scope="session")
def built(example_output, tmp_path_factory):
    """(site folder with the built mydev, a fresh python that sees torch but not torch_openreg)."""
    example = example_module()
    tmp = tmp_path_factory.mktemp("minimal_backend")
    example.assemble(NAME, tmp / "src")
    site = example.build(tmp / "src", NAME)  # cached by the example's run: no compile here
    return site, example.fresh_python(tmp / "venv")


def run(python, code: str, site: Path, autoload: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site),
           "TORCH_DEVICE_BACKEND_AUTOLOAD": "1" if autoload else "0"}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env,
                          cwd=tempfile.gettempdir(), timeout=120)


def test_backend_assembled_from_the_listings_passes_the_smoke_test(example_output):
    lines = example_output.splitlines()
    assert "csrc/mydev.cpp" in example_output and "mydev/__init__.py" in example_output
    assert "csrc/driver.cpp" in example_output and "csrc/driver.h" in example_output
    assert "torch.backends entry points: ['mydev']" in lines
    assert "device: mydev:0 | autoloaded torch.mydev: True" in lines
    assert "smoke: (x + 2).relu().sum().item() = 18.0" in lines
    round_trips = [line for line in lines if line.startswith("round trip exact:")]
    assert len(round_trips) == 6 and all(line.endswith(" True") for line in round_trips), lines


def test_the_host_cannot_read_device_memory(example_output):
    assert f"host reads device memory: exit code {-signal.SIGSEGV}" in example_output.splitlines()


def test_streams_and_events(example_output):
    assert ("streams: current inside `with`: True | idle: True | event done: True "
            "| elapsed_time >= 0: True | result: 54.0") in example_output.splitlines()


def test_seeded_random_numbers(example_output):
    lines = example_output.splitlines()
    assert "torch.manual_seed repeats device randn: True | mean 0.0, std 1.0" in lines
    assert ("generator: set_state repeats: True | deepcopy repeats: True | initial_seed: 3"
            in lines)


def test_mlp_trains_as_on_the_cpu(example_output):
    assert ("MLP, 20 SGD steps: parameters equal the CPU's within 1e-5: True | loss equal: True"
            in example_output.splitlines())


def test_autocast_in_bfloat16(example_output):
    assert ("autocast bfloat16: output torch.bfloat16 | loss torch.float32 "
            "| equals CPU autocast within bfloat16 precision: True") in example_output.splitlines()


def test_the_resized_output_warning_has_the_cause_troubleshooting_gives(example_output):
    """The smoke test turns warnings into errors, so training with mse_loss proved the fix;
    the out= call with a 0-dim result still warns, as docs/troubleshooting.md explains."""
    assert ("mse_loss with a 0-dim out= warns: An output with one or more elements was resized"
            in example_output.splitlines())


def test_listings_alone_make_the_whole_backend():
    """Every line of the minimal backend that matters is inside a listing the chapter shows."""
    example = example_module()
    listed = example.listed_regions()
    made_by_builds = {"__pycache__", "build"}
    sources = {str(p.relative_to(example.SOURCE)) for p in example.SOURCE.rglob("*")
               if p.is_file() and not made_by_builds & set(p.relative_to(example.SOURCE).parts)
               and not any(part.endswith(".egg-info") for part in p.parts)}
    assert set(listed) == sources


def test_bad_device_index_is_a_clear_error(built):
    site, python = built
    result = run(python, "import torch\ntry:\n    torch.empty(2, device='mydev:3')\n"
                 "except RuntimeError as e:\n    print(str(e).splitlines()[0])", site)
    assert result.returncode == 0, result.stderr
    assert "mydev: invalid device index 3 (there are 1 devices)" in result.stdout


def test_manual_seed_needs_both_device_module_functions(built):
    """torch.manual_seed reaches the device only if torch.mydev has _is_in_bad_fork and
    manual_seed_all: without the first, device random numbers stop repeating."""
    site, python = built
    code = ("import torch\n"
            "def twice():\n"
            "    draws = []\n"
            "    for _ in range(2):\n"
            "        torch.manual_seed(7)\n"
            "        draws.append(torch.randn(8, device='mydev').cpu())\n"
            "    return torch.equal(*draws)\n"
            "print(twice())\n"
            "del torch.mydev._is_in_bad_fork\n"
            "print(twice())")
    result = run(python, code, site)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "False"]


KERNEL_CASES = """
import warnings, torch
warnings.simplefilter("error")
d = "mydev"
x = torch.randn(3, 4)
def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.allclose(a.cpu(), b, atol=1e-5)
cases = {
    "int add (fallback)": same(torch.arange(4).to(d) + 1, torch.arange(4) + 1),
    "int + float promotes": same(torch.arange(4).to(d) + 0.5, torch.arange(4) + 0.5),
    "bfloat16 add": same(x.bfloat16().to(d) + x.bfloat16().to(d), x.bfloat16() * 2),
    "broadcast mul": same(x.to(d) * x[0].to(d), x * x[0]),
    "CPU 0-dim operand": same(x.to(d) + torch.tensor(2.), x + 2),
    "empty add": same(torch.empty(0, 3).to(d) + 1, torch.empty(0, 3) + 1),
    "sum of 0-dim": same(torch.tensor(3.).to(d).sum(), torch.tensor(3.)),
    "sum over empty": same(torch.empty(0, 3).to(d).sum(0), torch.zeros(3)),
    "sum negative dims": same(x.to(d).sum((-1, 0), keepdim=True), x.sum((-1, 0), keepdim=True)),
    "int sum (fallback)": same(torch.arange(6).to(d).sum(), torch.tensor(15)),
    "mm, inner size 0": same(torch.empty(2, 0).to(d) @ torch.empty(0, 3).to(d), torch.zeros(2, 3)),
    "int mm (fallback)": same(torch.ones(2, 2, dtype=torch.long).to(d).mm(
        torch.ones(2, 2, dtype=torch.long).to(d)), torch.full((2, 2), 2)),
    "relu keeps NaN": torch.isnan(torch.tensor([float("nan"), -1.]).to(d).relu().cpu()).tolist()
                      == [True, False],
}
print(sorted(k for k, ok in cases.items() if not ok))
for bad in (lambda: torch.ones(2, 3, device=d).mm(torch.ones(2, 3, device=d)),
            lambda: torch.empty(3, device=d).uniform_(2, 1)):
    try:
        bad()
    except RuntimeError as e:
        print(e)
"""


def test_device_kernels_match_the_cpu_and_leave_other_dtypes_to_the_fallback(built):
    site, python = built
    result = run(python, KERNEL_CASES, site)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[]", "mm: cannot multiply [2, 3] by [2, 3]",
                                          "uniform_ expects from <= to, got from=2 to=1"]


def test_two_installed_backends_fail_import_torch_cleanly(built):
    """Both entry points visible (this environment has torch_openreg): no abort, an error."""
    site, _ = built
    result = run(sys.executable, "import torch", site)
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "cannot load: PrivateUse1 is already the" in result.stderr
    assert "'mydev'" in result.stderr and "'openreg'" in result.stderr


def test_importing_openreg_after_another_backend_raises(built):
    site, python = built
    code = (f"import sys, torch\nsys.path.insert(0, {str(ROOT)!r})\n"
            "try:\n    import torch_openreg\nexcept RuntimeError as e:\n    print(e)\n"
            "print((torch.ones(2, device='mydev') * 3).sum().item())")
    result = run(python, code, site)
    assert result.returncode == 0, result.stderr
    assert ("torch_openreg cannot load: PrivateUse1 is already the 'mydev' backend in this "
            "process, and 'openreg' would be a second one") in result.stdout
    assert result.stdout.splitlines()[-1] == "6.0"  # mydev still works


def test_without_the_check_a_second_backend_aborts_the_process(built):
    """What the check prevents: loading openreg's library directly kills the process."""
    import torch_openreg

    library = Path(torch_openreg.__file__).parent / "lib" / "libtorch_openreg.so"
    assert library.is_file()
    site, python = built
    result = run(python, f"import ctypes, torch\nctypes.CDLL({str(library)!r})", site)
    assert result.returncode == -signal.SIGABRT, (result.returncode, result.stderr)
    # The first of the library's static registrations to meet the other backend aborts: its
    # fallback, or its backend's name, whichever the linker placed first.
    assert ("multiple backend fallbacks" in result.stderr
            or "register_privateuse1_backend() has already been set" in result.stderr)


def copy_sources(dest: Path) -> Path:
    """The Python files of the package, as a source folder without the compiled _C."""
    package = ROOT / "torch_openreg"
    for path in package.rglob("*.py"):
        target = dest / "torch_openreg" / path.relative_to(package)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return dest


def installed_elsewhere(site: Path) -> Path:
    """What a non-editable install leaves for importlib.metadata: a dist-info with the
    torch.backends entry point (the package's files are not needed for this test)."""
    info = site / "torch_openreg-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch_openreg\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(
        "[torch.backends]\ntorch_openreg = torch_openreg:_autoload\n")
    return site


@pytest.mark.parametrize("autoload", ["0", "1"])
def test_source_folder_without_extension_says_so(built, tmp_path, autoload):
    """Python started in the source root of a non-editable install imports the sources.

    Run by a Python that has torch but not this checkout's editable install (whose finder
    would supply the compiled _C), with torch_openreg "installed" in another folder.
    """
    _, python = built
    site = installed_elsewhere(tmp_path / "site")
    source_root = copy_sources(tmp_path / "checkout")
    code = "import torch_openreg" if autoload == "0" else "import torch"
    env = {**os.environ, "PYTHONPATH": str(site), "TORCH_DEVICE_BACKEND_AUTOLOAD": autoload}
    env.pop("VIRTUAL_ENV", None)
    result = subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                            cwd=source_root, timeout=120, env=env)
    assert result.returncode == 1, result.stderr
    assert "ImportError: torch_openreg was imported from " in result.stderr, result.stderr
    assert (f"{source_root / 'torch_openreg'}, a source folder without the compiled extension "
            f"torch_openreg._C (the installed package is {site / 'torch_openreg'})"
            ) in result.stderr.replace("\n", " "), result.stderr

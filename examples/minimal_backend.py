"""Assembles a fresh backend from the guide's minimal listings alone, builds it, and runs it.

    python examples/minimal_backend.py [--name mydev]

Reads docs/minimal-backend.md, takes every region it includes from examples/minimal_backend/,
concatenates each file's regions (nothing else: no line outside a listing is copied), renames
`minireg` to NAME, installs the result into a target folder with pip, and runs the smoke test
in a fresh virtual environment that sees the new backend but not torch_openreg: two
PrivateUse1 backends cannot share a process. The build is cached under
build/minimal_backend/<hash of the sources> so the guide and the tests compile it once.
"""

import argparse
import hashlib
import importlib.metadata
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "docs" / "minimal-backend.md"
SOURCE = ROOT / "examples" / "minimal_backend"
TAG = "LITERALINCLUDE" + " "  # in two pieces: this file has no markers of its own
LISTING_RE = re.compile(r"\{listing\}\s*(\w+)")


def listed_regions() -> dict[str, list[str]]:
    """{file inside examples/minimal_backend: [region names the chapter lists]}."""
    names = set(LISTING_RE.findall(CHAPTER.read_text(encoding="utf-8")))
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in SOURCE.rglob("*") if p.is_file()):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for name in re.findall(TAG + r"START:\s*(\w+)", text):
            if name in names:
                found.setdefault(path.relative_to(SOURCE).as_posix(), []).append(name)
    return found


def assemble(name: str, dest: Path) -> list[tuple[str, int]]:
    """Writes the listed regions of each file, in file order, renamed, under dest."""
    written = []
    for path, names in sorted(listed_regions().items()):
        lines = (SOURCE / path).read_text(encoding="utf-8").splitlines()
        regions = []
        for region in names:
            start = next(i for i, t in enumerate(lines) if f"{TAG}START: {region}" in t)
            end = next(i for i, t in enumerate(lines) if f"{TAG}END: {region}" in t)
            regions.append((start, "\n".join(lines[start + 1:end])))
        text = "\n\n".join(body for _, body in sorted(regions)) + "\n"
        target = dest / path.replace("minireg", name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text.replace("minireg", name), encoding="utf-8")
        written.append((str(target.relative_to(dest)), text.count("\n")))
    return written


def build(src: Path, name: str) -> Path:
    """pip-installs the assembled project into a cached target folder; returns it."""
    digest = hashlib.sha256()
    for path in sorted(src.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(src)).encode() + path.read_bytes())
    digest.update(sys.version.encode())
    site = ROOT / "build" / "minimal_backend" / f"{name}-{digest.hexdigest()[:16]}"
    if not (site / "done").exists():
        shutil.rmtree(site, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation",
                        "--no-deps", "--target", str(site / "site"), str(src)],
                       check=True,
                       env={**os.environ, "MAX_JOBS": "1", "PIP_ROOT_USER_ACTION": "ignore"})
        (site / "done").write_text("")
    return site / "site"


def fresh_python(where: Path) -> Path:
    """A virtual environment with this Python's packages (torch and its dependencies) except
    the ones that register a PrivateUse1 backend, such as torch_openreg itself: two such
    backends cannot share a process. Works whether torch_openreg is installed next to torch
    or in a virtual environment of its own."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(where)], check=True)
    hidden = set()
    for dist in importlib.metadata.distributions():
        if dist.entry_points.select(group="torch.backends"):
            hidden.update(Path(file).parts[0] for file in dist.files or ())
    python = where / "bin" / "python"
    target = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True, capture_output=True, text=True).stdout.strip())
    folders = site.getsitepackages()
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    for folder in map(Path, folders):
        for entry in sorted(folder.iterdir()) if folder.is_dir() else ():
            link = target / entry.name
            if entry.name not in hidden and not link.exists():
                link.symlink_to(entry)
    return python


SMOKE = """
import ctypes, copy, importlib.metadata, subprocess, sys, warnings
import torch
warnings.simplefilter("error")  # any warning the backend causes fails the smoke test
backends = sorted(e.name for e in importlib.metadata.entry_points(group="torch.backends"))
print("torch.backends entry points:", backends)
x = torch.tensor([[1., 2.], [3., 4.]], device="NAME")
print("device:", x.device, "| autoloaded torch.NAME:", hasattr(torch, "NAME"))
print("smoke: (x + 2).relu().sum().item() =", (x + 2).relu().sum().item())

# Memory: every copy crosses the driver; freeing a block leaves its neighbours alone.
host = torch.arange(12, dtype=torch.float64).reshape(3, 4)
dev = host.to("NAME")
blocks = [torch.full((5,), float(i), device="NAME") for i in range(8)]
del blocks[1::2]
checks = {
    "host->device->host": torch.equal(dev.cpu(), host),
    "strided view": torch.equal(dev.t()[1:, ::2].cpu(), host.t()[1:, ::2]),
    "device->device clone": torch.equal(dev.clone().cpu(), host),
    "dtype conversion": torch.equal(dev.to(torch.int32).cpu(), host.to(torch.int32)),
    "write through a view": torch.equal(dev[:, 1].fill_(7).cpu(), torch.full((3,), 7.)),
    "neighbours of freed": all(torch.equal(b.cpu(), torch.full((5,), 2. * i))
                               for i, b in enumerate(blocks)),
}
for what, exact in checks.items():
    print(f"round trip exact: {what:24} {exact}")
TOUCH = "import ctypes, torch; t = torch.ones(4, device='NAME'); " \\
        "ctypes.c_float.from_address(t.data_ptr()).value"
run = subprocess.run([sys.executable, "-c", TOUCH], capture_output=True)
print("host reads device memory: exit code", run.returncode)

# Streams and events.
stream, other = torch.Stream(device="NAME"), torch.Stream(device="NAME")
start = torch.Event(device="NAME", enable_timing=True)
end = torch.Event(device="NAME", enable_timing=True)
with stream:
    current = torch.accelerator.current_stream() == stream
    start.record()
    y = torch.mm(x, x).relu().sum()
    end.record()
other.wait_event(end)
other.synchronize()
torch.accelerator.synchronize()
print("streams: current inside `with`:", current, "| idle:", stream.query(),
      "| event done:", end.query(), "| elapsed_time >= 0:", start.elapsed_time(end) >= 0,
      "| result:", y.item())

# Random numbers: torch.manual_seed reaches the device generator.
torch.manual_seed(7)
a = torch.randn(10000, device="NAME").cpu()
torch.manual_seed(7)
b = torch.randn(10000, device="NAME").cpu()
print("torch.manual_seed repeats device randn:", torch.equal(a, b),
      f"| mean {a.mean().item():.1f}, std {a.std().item():.1f}")
g = torch.Generator(device="NAME").manual_seed(3)
state, twin = g.get_state(), copy.deepcopy(g)
u = torch.rand(5, device="NAME", generator=g).cpu()
g.set_state(state)
again = torch.rand(5, device="NAME", generator=g).cpu()
copied = torch.rand(5, device="NAME", generator=twin).cpu()
print("generator: set_state repeats:", torch.equal(u, again),
      "| deepcopy repeats:", torch.equal(u, copied), "| initial_seed:", g.initial_seed())

# A two-layer MLP trained 20 steps on the device and on the CPU from the same start.
torch.manual_seed(0)
cpu_model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
dev_model = copy.deepcopy(cpu_model).to("NAME")
inputs, targets = torch.randn(64, 8), torch.randn(64, 1)
losses = {}
for model, device in ((cpu_model, "cpu"), (dev_model, "NAME")):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(20):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(inputs.to(device)), targets.to(device))
        loss.backward()
        optimizer.step()
    losses[device] = loss.item()
gap = max((p.cpu() - q).abs().max().item() for p, q in zip(dev_model.parameters(),
                                                          cpu_model.parameters()))
print("MLP, 20 SGD steps: parameters equal the CPU's within 1e-5:", gap < 1e-5,
      "| loss equal:", abs(losses["NAME"] - losses["cpu"]) < 1e-5)

# Autocast in bfloat16: matrix products in bfloat16, the loss in float32.
with torch.autocast("NAME", dtype=torch.bfloat16):
    out = dev_model(inputs.to("NAME"))
    loss = torch.nn.functional.mse_loss(out, targets.to("NAME"))
with torch.autocast("cpu", dtype=torch.bfloat16):
    cpu_out = cpu_model(inputs)
print("autocast bfloat16: output", out.dtype, "| loss", loss.dtype,
      "| equals CPU autocast within bfloat16 precision:",
      torch.allclose(out.cpu().float(), cpu_out.float(), rtol=1e-2, atol=1e-2))

# The cause of the troubleshooting warning: mse_loss.out given a 0-dim result.
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    torch._C._nn.mse_loss(x, x, 1, out=torch.empty((), device="NAME"))  # 1: "mean"
print("mse_loss with a 0-dim out= warns:", str(caught[0].message).split(" since")[0])
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="mydev", help="the new backend's device name")
    name = parser.parse_args().name
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        print(f"assembled from {CHAPTER.relative_to(ROOT)}'s listings, renamed to {name!r}:")
        for path, count in assemble(name, tmp / "src"):
            print(f"  {path:28} {count:4} lines")
        site = build(tmp / "src", name)
        python = fresh_python(tmp / "venv")
        env = {**os.environ, "PYTHONPATH": str(site), "TORCH_DEVICE_BACKEND_AUTOLOAD": "1"}
        env.pop("VIRTUAL_ENV", None)
        result = subprocess.run([str(python), "-c", textwrap.dedent(SMOKE).replace("NAME", name)],
                                capture_output=True, text=True, env=env, cwd=tmp, timeout=120)
        if result.returncode != 0:
            sys.exit(f"the assembled backend failed:\n{result.stderr}")
        print(result.stdout, end="")


if __name__ == "__main__":
    main()

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
import importlib.metadata, torch
backends = sorted(e.name for e in importlib.metadata.entry_points(group="torch.backends"))
print("torch.backends entry points:", backends)
x = torch.tensor([[1., 2.], [3., 4.]], device="NAME")
print("device:", x.device, "| autoloaded torch.NAME:", hasattr(torch, "NAME"))
print("smoke: (x + 2).relu().sum().item() =", (x + 2).relu().sum().item())
host = torch.arange(12, dtype=torch.float64).reshape(3, 4)
dev = host.to("NAME")
checks = {
    "host->device->host": torch.equal(dev.cpu(), host),
    "strided view": torch.equal(dev.t()[1:, ::2].cpu(), host.t()[1:, ::2]),
    "device->device clone": torch.equal(dev.clone().cpu(), host),
    "dtype conversion": torch.equal(dev.to(torch.int32).cpu(), host.to(torch.int32)),
    "write through a view": torch.equal(dev[:, 1].fill_(7).cpu(), torch.full((3,), 7.)),
}
for what, exact in checks.items():
    print(f"round trip exact: {what:24} {exact}")
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

"""Builds torch_openreg's four libraries with CMake + Ninja and packages them.

    pip install --no-build-isolation -e .    # develop: libraries land in torch_openreg/lib
    pip install --no-build-isolation .       # install

The CMake tree lives in build/cmake and is reused, so a rebuild recompiles only
what changed (also directly: cmake --build build/cmake).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
BUILD_DIR = ROOT / "build" / "cmake"


# LITERALINCLUDE START: BUILD_SETUP_CMAKE
class CMakeBuild(build_ext):
    """Configures once, then lets Ninja rebuild only what changed."""

    def build_extension(self, ext: Extension) -> None:
        ext_path = Path(self.get_ext_fullpath(ext.name)).resolve()
        if getattr(self, "editable_mode", False) or self.inplace:
            # Develop mode: build into the source tree, where the package is imported from.
            ext_path, staged = ROOT / "torch_openreg" / ext_path.name, ext_path
        else:
            staged = ext_path
        args = [
            f"-DPython3_EXECUTABLE={sys.executable}",
            f"-DOPENREG_EXT_PATH={ext_path}",
            f"-DOPENREG_LIB_DIR={ext_path.parent / 'lib'}",
            f"-DCMAKE_BUILD_TYPE={os.environ.get('OPENREG_BUILD_TYPE', 'Release')}",
        ]
        stamp = BUILD_DIR / "configure-args.txt"
        if not (BUILD_DIR / "build.ninja").exists() or stamp.read_text() != "\n".join(args):
            BUILD_DIR.mkdir(parents=True, exist_ok=True)
            subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(BUILD_DIR), "-G", "Ninja",
                                   *args])
            stamp.write_text("\n".join(args))
        jobs = os.environ.get("MAX_JOBS", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", str(BUILD_DIR), "--parallel", jobs])
        if staged != ext_path:  # setuptools copies the staged file back over the source one
            staged.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ext_path, staged)
# LITERALINCLUDE END: BUILD_SETUP_CMAKE


setup(
    ext_modules=[Extension("torch_openreg._C", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    package_data={"torch_openreg": ["lib/*.so"]},
)

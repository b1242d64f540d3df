# LITERALINCLUDE START: MINIMAL_BACKEND_SETUP
"""Builds minireg's one library with CMake:  pip install --no-build-isolation ."""

import os
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        output = Path(self.get_ext_fullpath(ext.name)).resolve()
        build_dir = Path(self.build_temp).resolve() / "cmake"
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build_dir),
                               f"-DPython3_EXECUTABLE={sys.executable}",
                               f"-DMINIREG_OUTPUT={output}"])
        subprocess.check_call(["cmake", "--build", str(build_dir),
                               "--parallel", os.environ.get("MAX_JOBS", "1")])


setup(ext_modules=[Extension("minireg._C", sources=[])], cmdclass={"build_ext": CMakeBuild})
# LITERALINCLUDE END: MINIMAL_BACKEND_SETUP

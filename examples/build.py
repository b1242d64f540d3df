"""The four libraries of the installed package, and which of them each one loads."""

import subprocess
from pathlib import Path

import torch_openreg

# LITERALINCLUDE START: EXAMPLE_LIBRARIES
package = Path(torch_openreg.__file__).parent
libraries = sorted(package.glob("_C*.so")) + sorted((package / "lib").glob("*.so"))
ours = {lib.name for lib in libraries}
for lib in libraries:
    dynamic = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]
    print(f"{lib.name:42} loads "
          f"{', '.join(n for n in needed if n in ours) or '(no openreg library)'}")
# LITERALINCLUDE END: EXAMPLE_LIBRARIES

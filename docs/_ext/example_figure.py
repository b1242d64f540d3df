"""The example-figure directive: runs an example that draws a figure while the guide builds.

    ```{example-figure} ../examples/profiling_timeline.py
    :alt: what the figure shows
    ```

The example is run with one argument, the path of a PNG to write (under docs/_generated/, which
is not committed), and the page shows that picture. A program that fails fails the build, so
the figure is always drawn from this build of the backend, never pasted in.
"""

import os
import subprocess
import sys
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective


class ExampleFigure(SphinxDirective):
    required_arguments = 1
    option_spec = {"alt": directives.unchanged}

    def run(self):
        source = Path(self.env.doc2path(self.env.docname)).parent
        script = (source / self.arguments[0]).resolve()
        self.env.note_dependency(str(script))
        out_dir = Path(self.env.srcdir) / "_generated"
        out_dir.mkdir(exist_ok=True)
        image = out_dir / f"{script.stem}.png"
        result = subprocess.run([sys.executable, str(script), str(image)], capture_output=True,
                                text=True, env=dict(os.environ), cwd=script.parent.parent,
                                timeout=300)
        if result.returncode != 0 or not image.exists():
            raise self.error(f"{script.name} exited with {result.returncode}:\n{result.stderr}")
        uri = os.path.relpath(image, source)
        return [nodes.image(uri=uri, alt=self.options.get("alt", script.stem),
                            candidates={"*": uri})]


def setup(app):
    app.add_directive("example-figure", ExampleFigure)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

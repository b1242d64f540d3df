"""The run-example directive: runs a Python file while the guide builds and shows its output.

    ```{run-example} ../examples/tools.py
    :env: TORCH_SHOW_DISPATCH_TRACE=1
    ```

Output is what the program printed (stdout, then stderr) on this build of the
backend, never pasted text. A program that fails fails the build.
"""

import os
import subprocess
import sys
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective


class RunExample(SphinxDirective):
    required_arguments = 1
    option_spec = {"env": directives.unchanged}

    def run(self):
        source = Path(self.env.doc2path(self.env.docname)).parent
        script = (source / self.arguments[0]).resolve()
        self.env.note_dependency(str(script))
        env = dict(os.environ)
        for pair in (self.options.get("env") or "").split():
            key, _, value = pair.partition("=")
            env[key] = value
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                                env=env, cwd=script.parent.parent, timeout=300)
        if result.returncode != 0:
            raise self.error(f"{script.name} exited with {result.returncode}:\n{result.stderr}")
        text = result.stdout + result.stderr
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def setup(app):
    app.add_directive("run-example", RunExample)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

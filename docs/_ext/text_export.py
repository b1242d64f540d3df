"""The guide as plain Markdown: every page's source with its code written out, beside the site.

After an HTML build, `_text/<page>.md` in the output folder holds each page's Markdown with
every `listing` block replaced by the fenced code of its region, under the path of the file it
comes from (and the helpers it uses, with where each is defined), and every `run-example` block
replaced by the output the example printed during this build. The files read without the HTML,
a rendering of MyST or the sources next to them: what a page shows is in its text.

The outputs are the ones the build showed: this extension registers `run-example` again as a
subclass that keeps each output for the export, so no example runs twice. `export_page` is the
whole transformation, and takes any source of outputs (tests run the examples themselves).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from pathlib import Path

import listing
import regions
from run_example import RunExample
from sphinx.util import logging

logger = logging.getLogger(__name__)

BLOCK_RE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,})\s*\{(?P<kind>listing|run-example)\}"
                      r"\s*(?P<arg>\S+)\s*$")
# A fence of code, whose lines stay as they are: no info, a language, or a code directive.
CODE_FENCE_RE = re.compile(r"^\s*(?P<fence>`{3,}(?!`)|~{3,}(?!~))\s*"
                           r"(?:\{(?:code-block|code|sourcecode)\}|[^{\s]\S*)?(?:\s.*)?$")
DIRECTIVE_RE = re.compile(r"^\s*(?P<fence>`{3,}(?!`)|:{3,}(?!:))\s*\{[^}]+\}")  # holds Markdown
OPTION_RE = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*)$")
TEXT_DIR = "_text"

Outputs = Callable[[str, str], str]  # (run-example argument, its :env: option) -> the output


def fenced(code: str, language: str, indent: str = "") -> list[str]:
    fence = "`" * max(3, max((len(m) for m in re.findall(r"`{3,}", code)), default=0) + 1)
    return [indent + line if line else "" for line in [fence + language, *code.split("\n"), fence]]


def closes(line: str, fence: str) -> bool:
    """True when `line` closes a block opened with `fence` (the same character, as many or more)."""
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def listing_text(name: str, index: regions.CodeIndex, indent: str = "") -> list[str]:
    """A region as Markdown: its file's path, its code, and the helpers it uses."""
    region = index.regions.get(name)
    if region is None:
        raise KeyError(f"no region named {name} in the sources")
    rel = region.path.relative_to(index.root).as_posix()
    code = textwrap.dedent(region.text).strip("\n")
    out = [f"{indent}`{rel}` (region `{name}`):", ""]
    out += fenced(code, region.language, indent)
    helpers = index.helpers(region)
    if helpers:
        where = ", ".join(f"`{d.name}` ({d.path.relative_to(index.root).as_posix()}:{d.line})"
                          for d in helpers)
        out += ["", f"{indent}Defined elsewhere: {where}."]
    return out


def export_page(text: str, outputs: Outputs, index: regions.CodeIndex | None = None) -> str:
    """`text`, a page's MyST source, with its listing and run-example blocks written out."""
    index = index or listing.index()
    lines = text.split("\n")
    out: list[str] = []
    opened: list[str] = []  # the fences of the directives around this line (tabs, notes)
    i = 0
    while i < len(lines):
        match = BLOCK_RE.match(lines[i])
        if not match and opened and closes(lines[i], opened[-1]):
            opened.pop()
            out.append(lines[i])
            i += 1
            continue
        code = None if match else CODE_FENCE_RE.match(lines[i])
        if code:  # copied whole: a line inside code that looks like a block is code
            out.append(lines[i])
            i += 1
            while i < len(lines) and not closes(lines[i], code["fence"]):
                out.append(lines[i])
                i += 1
            if i < len(lines):
                out.append(lines[i])
                i += 1
            continue
        if not match:
            directive = DIRECTIVE_RE.match(lines[i])
            if directive:
                opened.append(directive["fence"])
            out.append(lines[i])
            i += 1
            continue
        fence, indent = match["fence"], match["indent"]
        options: dict[str, str] = {}
        i += 1
        while i < len(lines) and not closes(lines[i], fence):
            option = OPTION_RE.match(lines[i])
            if option:
                options[option["key"]] = option["value"].strip()
            i += 1
        if i == len(lines):
            raise ValueError(f"the {match['kind']} block of {match['arg']} is never closed")
        i += 1  # the closing fence
        if match["kind"] == "listing":
            out += listing_text(match["arg"], index, indent)
        else:
            env = options.get("env", "")
            shown = match["arg"].removeprefix("../")
            out += [f"{indent}Output of `{shown}`" + (f" (with `{env}`)" if env else "") + ":", ""]
            out += fenced(outputs(match["arg"], env).rstrip("\n"), "text", indent)
    return "\n".join(out)


class RecordedRunExample(RunExample):
    """run-example, keeping what it showed for the export."""

    def run(self):
        result = super().run()
        kept = getattr(self.env, "text_export_outputs", None)
        if kept is None:
            kept = self.env.text_export_outputs = {}
        key = (self.arguments[0], (self.options.get("env") or "").strip())
        kept.setdefault(self.env.docname, {}).setdefault(key, []).append(result[0].astext())
        return result


def _purge(app, env, docname: str) -> None:
    getattr(env, "text_export_outputs", {}).pop(docname, None)


def _merge(app, env, docnames, other) -> None:
    kept = getattr(env, "text_export_outputs", None)
    if kept is None:
        kept = env.text_export_outputs = {}
    for docname in docnames:
        if docname in getattr(other, "text_export_outputs", {}):
            kept[docname] = other.text_export_outputs[docname]


def write_exports(app, exception) -> None:
    """Writes _text/<page>.md for every page of an HTML build."""
    if exception is not None or app.builder.format != "html":
        return
    env = app.env
    kept = getattr(env, "text_export_outputs", {})
    target = Path(app.outdir) / TEXT_DIR
    for docname in sorted(env.found_docs):
        source = Path(env.doc2path(docname))
        taken: dict[tuple[str, str], int] = {}

        def outputs(argument: str, options: str, docname=docname, taken=taken) -> str:
            key = (argument, options)
            shown = kept.get(docname, {}).get(key, [])
            n = taken.get(key, 0)
            taken[key] = n + 1
            if n >= len(shown):  # the example failed, and the build said so where it ran
                logger.warning("no output of %s to export (the example failed, or the "
                               "environment predates the export: rebuild with -E)", argument,
                               location=docname)
                return "(no output: the example did not run in this build)"
            return shown[n]

        page = target / f"{docname}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(export_page(source.read_text(encoding="utf-8"), outputs) + "\n",
                        encoding="utf-8")


def setup(app):
    app.setup_extension("run_example")
    app.add_directive("run-example", RecordedRunExample, override=True)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", write_exports)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}

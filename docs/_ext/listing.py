"""The listing directive: shows a marked region of the sources, found by its name.

    ```{listing} GUARD_EXCHANGE_DEVICE
    ```

The listing's caption names the file and links to the file's page under "Source files", which
shows the whole file. Below the code, "Defined elsewhere" links every helper the region uses
and does not contain to its definition on the page of the file that holds it, so the helpers
and includes of a listing are always one click away. A region that does not exist, or a helper
link that does not resolve, fails the build (-W).
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT / "tools"))

import regions  # noqa: E402  (tools/ is on the path only from here)

LISTING_RE = re.compile(r"^\s*(?:```+|:::+)\s*\{listing\}\s*(\S+)", re.M)
CODE_DIR = DOCS / "code"  # generated while the site builds (git ignores it)
_index: regions.CodeIndex | None = None


def index() -> regions.CodeIndex:
    global _index
    if _index is None:
        _index = regions.CodeIndex(ROOT)
    return _index


def listed_names(docs: Path = DOCS) -> dict[str, list[tuple[Path, int]]]:
    """Each region name a chapter lists, with where it is listed."""
    found: dict[str, list[tuple[Path, int]]] = {}
    for doc in sorted(docs.glob("*.md")):
        text = doc.read_text(encoding="utf-8")
        for m in LISTING_RE.finditer(text):
            found.setdefault(m.group(1), []).append((doc, text.count("\n", 0, m.start()) + 1))
    return found


def ref(target: str, text: str, literal: bool = True) -> addnodes.pending_xref:
    inner = nodes.literal(text, text) if literal else nodes.Text(text)
    node = addnodes.pending_xref("", inner, refdomain="std", reftype="ref", reftarget=target,
                                 refexplicit=True, refwarn=True)
    return node


class Listing(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self):
        idx = index()
        name = self.arguments[0]
        region = idx.regions.get(name)
        if region is None:
            raise self.error(f"no region named {name} in the sources")
        self.env.note_dependency(str(region.path))
        rel = region.path.relative_to(idx.root).as_posix()
        code = textwrap.dedent(region.text).strip("\n")
        block = nodes.literal_block(code, code)
        block["language"] = region.language
        caption = nodes.caption("", "")
        caption += ref(regions.label(idx.root, region.path), rel)
        wrapper = nodes.container("", literal_block=True, classes=["literal-block-wrapper"])
        wrapper += caption
        wrapper += block
        out = [wrapper]
        helpers = idx.helpers(region)
        if helpers:
            para = nodes.paragraph(classes=["listing-helpers"])
            para += nodes.Text("Defined elsewhere: ")
            names = [d.name for d in helpers]
            for i, d in enumerate(helpers):
                if i:
                    para += nodes.Text(", ")
                shown = d.name if names.count(d.name) == 1 else f"{d.name} ({d.path.name})"
                para += ref(regions.label(idx.root, d.path, d.name), shown)
            out.append(para)
        return out


def _fence(code: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", code)), default=2)
    return "`" * max(3, longest + 1)


def write_pages(app) -> None:
    """Writes one page per source file a listing shows or links into, and their index."""
    idx = index()
    anchors: dict[Path, set[tuple[str, int]]] = {}
    for name in listed_names():
        region = idx.regions.get(name)
        if region is None:
            continue
        anchors.setdefault(region.path, set())
        for d in idx.helpers(region):
            anchors.setdefault(d.path, set()).add((d.name, d.line))
    wanted: set[Path] = set()
    for path, marks in sorted(anchors.items()):
        page = CODE_DIR / (path.relative_to(idx.root).as_posix() + ".md")
        wanted.add(page)
        text = idx.texts[path]
        lines = text.splitlines()
        first: dict[str, int] = {}  # one label per name: overloads share their first line's
        for name, line in sorted(marks, key=lambda m: m[1]):
            first.setdefault(name, line)
        marks = {(name, line) for name, line in first.items()}
        cuts = sorted({line for _, line in marks})
        rel = path.relative_to(idx.root).as_posix()
        lang = regions.Region("", path, 0, 0, "").language
        out = [f"({regions.label(idx.root, path)})=", f"# {rel}", ""]
        bounds = [1] + [c for c in cuts if c > 1] + [len(lines) + 1]
        for start, stop in zip(bounds, bounds[1:]):
            for name, line in sorted(marks):
                if line == start:
                    out.append(f"({regions.label(idx.root, path, name)})=")
            chunk = "\n".join(lines[start - 1:stop - 1])
            if not chunk.strip():
                out.append("")
                continue
            fence = _fence(chunk)
            out += [f"{fence}{{code-block}} {lang}", ":linenos:", f":lineno-start: {start}", "",
                    chunk, fence, ""]
        _write_if_changed(page, "\n".join(out) + "\n")
    toc = ["# Source files", "",
           "Every file a chapter shows code from, whole; each listing's caption links here, and",
           "each helper a listing uses is linked to its definition on these pages.", "",
           "```{toctree}", ":maxdepth: 1", ""]
    toc += [p.relative_to(CODE_DIR).with_suffix("").as_posix() for p in sorted(wanted)]
    toc += ["```", ""]
    wanted.add(CODE_DIR / "index.md")
    _write_if_changed(CODE_DIR / "index.md", "\n".join(toc))
    for stale in CODE_DIR.rglob("*.md"):
        if stale not in wanted:
            stale.unlink()


def _write_if_changed(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def setup(app):
    app.add_directive("listing", Listing)
    app.connect("builder-inited", write_pages)
    return {"parallel_read_safe": False, "parallel_write_safe": True}

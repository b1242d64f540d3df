"""Checks that every code listing in the guide is an anchored region of real source.

    python tools/check_anchors.py [--root DIR]

Rules, each reported with file and line:
  include-file      a literalinclude names a file that exists
  include-markers   it uses :start-after: / :end-before: with START/END markers of one name
  include-lines     it does not use fixed :lines: or :emphasize-lines: ranges
  marker-name       marker names are [A-Z0-9_]+
  marker-pair       each name has exactly one START and one END, START first, in one file
  marker-empty      the region between them has code
  marker-nested     no region starts inside another
  marker-prefix     no name is a prefix of another (Sphinx matches the first line containing it)
  marker-braces     a region never splits a declaration: its brackets balance, and a C++
                    template's `template <...>` line is inside the region, not just above it
  marker-unused     every marker in the sources is included by some chapter
  chapter-test      every chapter docs/<name>.md has tests/test_<name>.py (hyphens as
                    underscores; the index page's test is tests/test_quickstart.py)
  example-chapter   every examples/<file>.py belongs to a chapter by name: examples/<name>.py or
                    examples/<name>_<what>.py (quickstart.py belongs to the index page)
  example-test      the chapter's test file runs each of its examples (names the file)
  example-untested  an example script (examples/*.py) a chapter includes or runs is run by
                    some test
  region-helper     a name a listed region uses is not defined in the same file outside every
                    region: a helper the listing calls must be shown too (in a region of its
                    own, included by a chapter)
  region-helper-elsewhere
                    the same for a helper of another file of the project: a name a listed
                    region uses that another file defines outside every region (C/C++: a file
                    of the same part of the project, unless a listed region declares it;
                    Python: a name the file imports from a module of the project, and a
                    _C._name whose pybind11 binding, m.def("_name", ...), is in no listed region)

A chapter is a top-level docs/*.md page other than op-coverage.md (generated). Sources are the
project's code files outside docs/ and tests/ (the tests build deliberately broken fixtures of
their own). Exits 1 if anything is wrong.
"""

# LITERALINCLUDE START: TOOLS_CHECK_ANCHORS_IMPORTS
from __future__ import annotations

import argparse
import ast
import bisect
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
# LITERALINCLUDE END: TOOLS_CHECK_ANCHORS_IMPORTS

# Spelled in two pieces so this file does not contain markers itself.
_TAG = "LITERALINCLUDE" + " "
MARKER_RE = re.compile(_TAG + r"(START|END):\s*(\S+)")
NAME_RE = re.compile(r"^[A-Z0-9_]+$")
SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp", ".py", ".toml", ".txt", ".cmake", ".sh"}
SKIP_DIRS = {".git", ".venv", "build", "docs", "tests", "__pycache__", ".pytest_cache", "_build"}
DIRECTIVE_RE = re.compile(r"^\s*(?:```+|:::+)\s*\{literalinclude\}\s*(\S+)")
# LITERALINCLUDE START: WHERE_EXAMPLE_USE_RE
EXAMPLE_USE_RE = re.compile(r"^\s*(?:```+|:::+)\s*\{(?:literalinclude|run-example)\}\s*(\S+)")
# LITERALINCLUDE END: WHERE_EXAMPLE_USE_RE
# LITERALINCLUDE START: WHERE_NOT_CHAPTERS
NOT_CHAPTERS = {"op-coverage", "opinfo-report"}  # generated while the site builds
# LITERALINCLUDE END: WHERE_NOT_CHAPTERS
# LITERALINCLUDE START: WHERE_ALIASES
ALIASES = {"index": "quickstart"}  # the index page's example and test are the quick start
# LITERALINCLUDE END: WHERE_ALIASES
TEMPLATE_HEAD_RE = re.compile(r"^\s*template\s*<.*>\s*$")  # a C++ template's first line
OPTION_RE = re.compile(r"^\s*:([\w-]+):\s*(.*?)\s*$")


@dataclass
class Marker:
    kind: str  # START or END
    name: str
    path: Path
    line: int


# LITERALINCLUDE START: WHERE_REGION
@dataclass
class Region:
    name: str
    path: Path
    start: int
    end: int
    text: str
# LITERALINCLUDE END: WHERE_REGION


@dataclass
class Include:
    doc: Path
    line: int
    target: str
    options: dict[str, str] = field(default_factory=dict)


# LITERALINCLUDE START: WHERE_REPORT
class Report:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.problems: list[str] = []

    def add(self, rule: str, path: Path, line: int, message: str) -> None:
        try:
            shown = path.relative_to(self.root)
        except ValueError:
            shown = path
        self.problems.append(f"{shown}:{line}: [{rule}] {message}")
# LITERALINCLUDE END: WHERE_REPORT


def source_files(root: Path) -> list[Path]:
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.suffix in SOURCE_SUFFIXES or name == "CMakeLists.txt":
                files.append(path)
    return files


def find_markers(files: list[Path]) -> list[Marker]:
    markers = []
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        for number, text in enumerate(lines, 1):
            for match in MARKER_RE.finditer(text):
                markers.append(Marker(match.group(1), match.group(2), path, number))
    return markers


# LITERALINCLUDE START: WHERE_STRIP_STRINGS_AND_COMMENTS
def strip_strings_and_comments(code: str, python: bool) -> str:
    """Removes string literals and comments so brackets inside them do not count."""
    if python:
        code = re.sub(r'("""|\'\'\')(?:.|\n)*?\1', "", code)
        code = re.sub(r"(\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*')", "", code)
        return re.sub(r"#[^\n]*", "", code)
    code = re.sub(r"/\*(?:.|\n)*?\*/", "", code)
    code = re.sub(r"//[^\n]*", "", code)
    code = re.sub(r"\"(?:\\.|[^\"\\\n])*\"", "", code)
    return re.sub(r"'(?:\\.|[^'\\\n])*'", "", code)
# LITERALINCLUDE END: WHERE_STRIP_STRINGS_AND_COMMENTS


def brackets_balance(text: str, python: bool) -> bool:
    pairs = {")": "(", "]": "[", "}": "{"}
    stack: list[str] = []
    for ch in strip_strings_and_comments(text, python):
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack.pop() != pairs[ch]:
                return False
    return not stack


def check_markers(markers: list[Marker], report: Report) -> dict[str, Region]:
    by_name: dict[str, list[Marker]] = {}
    for m in markers:
        if not NAME_RE.match(m.name):
            report.add("marker-name", m.path, m.line, f"marker name {m.name!r} is not [A-Z0-9_]+")
        by_name.setdefault(m.name, []).append(m)

    regions: dict[str, Region] = {}
    for name, found in sorted(by_name.items()):
        starts = [m for m in found if m.kind == "START"]
        ends = [m for m in found if m.kind == "END"]
        if len(starts) != 1 or len(ends) != 1:
            where = found[0]
            report.add("marker-pair", where.path, where.line,
                       f"{name}: {len(starts)} START and {len(ends)} END markers (need one of each)")
            continue
        start, end = starts[0], ends[0]
        if start.path != end.path or end.line <= start.line:
            report.add("marker-pair", start.path, start.line,
                       f"{name}: END must follow START in the same file")
            continue
        lines = start.path.read_text(encoding="utf-8").splitlines()
        body = "\n".join(lines[start.line:end.line - 1])
        regions[name] = Region(name, start.path, start.line, end.line, body)
        if not body.strip():
            report.add("marker-empty", start.path, start.line, f"{name}: the region is empty")
        elif not brackets_balance(body, start.path.suffix == ".py"):
            report.add("marker-braces", start.path, start.line,
                       f"{name}: brackets do not balance, so the region splits a declaration")
        elif start.line >= 2 and TEMPLATE_HEAD_RE.match(lines[start.line - 2]):
            report.add("marker-braces", start.path, start.line,
                       f"{name}: the template line above START is left out of the region")

    for outer in regions.values():
        for inner in regions.values():
            if inner is not outer and inner.path == outer.path and outer.start < inner.start < outer.end:
                report.add("marker-nested", inner.path, inner.start,
                           f"{inner.name} starts inside {outer.name} (lines {outer.start}-{outer.end})")

    names = sorted(by_name)
    for a in names:
        for b in names:
            if a != b and b.startswith(a):
                first = by_name[a][0]
                report.add("marker-prefix", first.path, first.line,
                           f"{a} is a prefix of {b}: Sphinx would match the wrong marker")
    return regions


def find_includes(docs: Path) -> list[Include]:
    includes = []
    for doc in sorted(docs.rglob("*.md")):
        if "_build" in doc.parts:
            continue
        lines = doc.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            match = DIRECTIVE_RE.match(lines[i])
            if match:
                inc = Include(doc, i + 1, match.group(1))
                j = i + 1
                while j < len(lines) and (opt := OPTION_RE.match(lines[j])):
                    inc.options[opt.group(1)] = opt.group(2)
                    j += 1
                includes.append(inc)
                i = j
            else:
                i += 1
    return includes


def check_includes(includes: list[Include], regions: dict[str, Region], report: Report) -> set[str]:
    used: set[str] = set()
    for inc in includes:
        target = (inc.doc.parent / inc.target).resolve()
        if not target.is_file():
            report.add("include-file", inc.doc, inc.line, f"{inc.target} does not exist")
            continue
        for banned in ("lines", "emphasize-lines"):
            if banned in inc.options:
                report.add("include-lines", inc.doc, inc.line,
                           f":{banned}: ranges drift when the code changes; use markers")
        start = MARKER_RE.fullmatch(inc.options.get("start-after", ""))
        end = MARKER_RE.fullmatch(inc.options.get("end-before", ""))
        if not start or not end or start.group(1) != "START" or end.group(1) != "END":
            report.add("include-markers", inc.doc, inc.line,
                       f"needs :start-after: {_TAG}START: NAME and :end-before: {_TAG}END: NAME")
            continue
        if start.group(2) != end.group(2):
            report.add("include-markers", inc.doc, inc.line,
                       f"START {start.group(2)} and END {end.group(2)} name different regions")
            continue
        name = start.group(2)
        region = regions.get(name)
        if region is None:
            report.add("include-markers", inc.doc, inc.line, f"no region named {name}")
        elif region.path.resolve() != target:
            report.add("include-markers", inc.doc, inc.line,
                       f"{name} is in {region.path.relative_to(report.root)}, not {inc.target}")
        else:
            used.add(name)
    return used


# LITERALINCLUDE START: WHERE_CHAPTER_KEY
def chapter_key(doc: Path) -> str:
    """The name a chapter's example and test share: docs/random-numbers.md -> random_numbers."""
    return ALIASES.get(doc.stem, doc.stem).replace("-", "_")
# LITERALINCLUDE END: WHERE_CHAPTER_KEY


# LITERALINCLUDE START: WHERE_NAMES_FILE
def names_file(text: str, filename: str) -> bool:
    """True when `filename` appears whole in `text` (memory.py, not test_memory.py)."""
    return re.search(r"(?<![\w.-])" + re.escape(filename) + r"(?!\w)", text) is not None
# LITERALINCLUDE END: WHERE_NAMES_FILE


# LITERALINCLUDE START: WHERE_CHAPTER_RULES
def check_chapters(root: Path, report: Report) -> None:
    docs, examples, tests = root / "docs", root / "examples", root / "tests"
    chapters = {chapter_key(doc): doc for doc in sorted(docs.glob("*.md"))
                if doc.stem not in NOT_CHAPTERS}
    test_text = {path.name: path.read_text(encoding="utf-8") for path in sorted(tests.glob("*.py"))}

    for key, doc in chapters.items():
        if f"test_{key}.py" not in test_text:
            report.add("chapter-test", doc, 1, f"the chapter has no tests/test_{key}.py")

    for example in sorted(examples.glob("*.py")):
        owners = [k for k in chapters if example.stem == k or example.stem.startswith(k + "_")]
        if not owners:
            report.add("example-chapter", example, 1,
                       f"{example.name} belongs to no chapter: name it examples/<chapter>.py or "
                       "examples/<chapter>_<what>.py")
            continue
        key = max(owners, key=len)  # device_kernels.py belongs to device-kernels, not device
        test = f"test_{key}.py"
        if test in test_text and not names_file(test_text[test], example.name):
            report.add("example-test", example, 1,
                       f"{example.name} belongs to {chapters[key].name}, "
                       f"but tests/{test} does not run it")

    for doc in sorted(docs.rglob("*.md")):
        if "_build" in doc.parts:
            continue
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            match = EXAMPLE_USE_RE.match(line)
            if not match:
                continue
            target = (doc.parent / match.group(1)).resolve()
            if target.suffix != ".py" or target.parent != examples.resolve():
                continue  # files of a project below examples/ are sources, not scripts
            if not any(names_file(text, target.name) for text in test_text.values()):
                report.add("example-untested", doc, number,
                           f"{match.group(1)} is shown by the chapter but no test runs it")
# LITERALINCLUDE END: WHERE_CHAPTER_RULES


# LITERALINCLUDE START: WHERE_HELPER_RULE
# What a file defines, found by the line that starts the definition. C/C++: a function
# definition at the start of a line (a return type, then the name and its parameters, with
# its body following), a type, a constant or alias, a macro. Python: module-level def, class
# and assignments. CMake: set().
CPP_DEFINITION_RES = [
    re.compile(r"^(?:[\w:<>,*&]+[ \t]+)+[*&]?(\w+)\([^;]*?\)[^;{]*\{", re.M | re.S),
    re.compile(r"^(?:template\s*<[^>]*>\s*)?(?:struct|class|enum(?: class)?)\s+(?:\w+\s+)?(\w+)"
               r"\s*(?:final\s*)?[:{]", re.M),
    re.compile(r"^(?:static\s+|inline\s+|thread_local\s+)*constexpr\s+[\w:<>,\s]+?\b(\w+)\s*[{=]",
               re.M),
    re.compile(r"^using\s+(\w+)\s*=", re.M),
    re.compile(r"^typedef\s+(?:struct|enum|union)\s*\w*\s*\{[^}]*\}\s*(\w+)\s*;", re.M),
    re.compile(r"^typedef\s+[^;{(]*?\b(\w+)\s*;", re.M),
    re.compile(r"^#define\s+(\w+)", re.M),
]
PY_DEFINITION_RES = [
    re.compile(r"^(?:async\s+)?def\s+(\w+)", re.M),
    re.compile(r"^class\s+(\w+)", re.M),
    re.compile(r"^(\w+)\s*(?::[^=\n]+)?=[^=]", re.M),
]
CMAKE_DEFINITION_RES = [re.compile(r"^\s*set\((\w+)", re.M | re.I)]
IDENT_RE = re.compile(r"[A-Za-z_]\w*")
KEYWORD_ARGUMENT_RE = re.compile(r"([(,]\s*)\w+\s*=(?!=)")


def python_names(code: str) -> set[str]:
    """The names a stripped Python listing uses as variables: not attributes (x.name) and not
    keyword arguments (f(name=...)), which name nothing of the module's."""
    code = re.sub(r"\.\s*\w+", " ", KEYWORD_ARGUMENT_RE.sub(r"\1", code))
    return set(IDENT_RE.findall(code))
CPP_SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp"}


def definitions(text: str, suffix: str, name: str) -> list[tuple[str, int]]:
    """(name, offset) of each definition in a file's text."""
    if suffix == ".py":
        patterns = PY_DEFINITION_RES
    elif suffix in {".c", ".cc", ".cpp", ".h", ".hpp"}:
        patterns = CPP_DEFINITION_RES
    elif suffix == ".cmake" or name == "CMakeLists.txt":
        patterns = CMAKE_DEFINITION_RES
    else:
        return []
    return [(m.group(1), m.start(1)) for pattern in patterns for m in pattern.finditer(text)]


GENERATED_DIR = Path(__file__).resolve().parent.parent / "examples" / "generated"


def regions_by_file(regions: dict[str, Region]) -> dict[Path, list[Region]]:
    by_file: dict[Path, list[Region]] = {}
    for region in regions.values():
        by_file.setdefault(region.path, []).append(region)
    return by_file


def outside_and_inside(path: Path, text: str,
                       file_regions: list[Region]) -> tuple[dict[str, int], set[str]]:
    """The names a file defines outside every region (with the line) and inside one."""
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    inside, outside = set(), {}
    for name, offset in definitions(text, path.suffix, path.name):
        line = bisect.bisect_right(line_starts, offset)
        if any(r.start < line < r.end for r in file_regions):
            inside.add(name)
        else:
            outside.setdefault(name, line)
    return outside, inside


def check_region_helpers(regions: dict[str, Region], used: set[str], report: Report) -> None:
    for path, file_regions in sorted(regions_by_file(regions).items()):
        if GENERATED_DIR in path.parents:
            continue  # generated code (a test regenerates it): its listing shows what a tool wrote
        outside, inside = outside_and_inside(path, path.read_text(encoding="utf-8"), file_regions)
        python = path.suffix == ".py"
        for region in sorted(file_regions, key=lambda r: r.start):
            if region.name not in used:
                continue
            if python or path.suffix in {".c", ".cc", ".cpp", ".h", ".hpp"}:
                code = strip_strings_and_comments(region.text, python)
            else:
                code = re.sub(r"#[^\n]*", "", region.text)
            code = re.sub(r"^\s*#\s*include[^\n]*", "", code, flags=re.M)  # file names
            names = python_names(code) if python else set(IDENT_RE.findall(code))
            for name in sorted(names & set(outside) - inside):
                report.add("region-helper", path, region.start,
                           f"{region.name} uses {name}, defined at line {outside[name]} outside "
                           "every region: show it in a region of its own")
# LITERALINCLUDE END: WHERE_HELPER_RULE


# LITERALINCLUDE START: WHERE_HELPER_ELSEWHERE_RULE
# A prototype in a listed region shows what a function takes and returns: a caller can copy
# the call. (A statement that calls a function looks the same: those words do not start one.)
CPP_DECLARATION_RE = re.compile(
    r"^[ \t]*((?:[\w:<>,*&]+[ \t]+)+)[*&]?(\w+)\([^;{}]*\)[^;{}=]*;", re.M)
BINDING_RE = re.compile(r"\bm\.def\(\s*\"(\w+)\"")
BOUND_CALL_RE = re.compile(r"\b_C\.(\w+)")
NOT_A_TYPE = {"return", "throw", "else", "case", "delete", "new", "co_return", "goto", "using"}
# A member (x.name, p->name) or a name of another library (std::name, at::name, ...) is not
# ours, whatever files of ours define the same word.
FOREIGN_RE = re.compile(
    r"(?:\.|->|\b(?:std|at|c10|torch|py|pybind11|caffe2|libkineto|c10d)::)\s*\w+")


def cpp_part(root: Path, path: Path) -> str:
    """The part of the project a C/C++ file belongs to: the backend (csrc/ and its Python
    bindings), the driver, or one example or benchmark program. Parts reach each other only
    through headers that are shown (the driver's C API)."""
    top = path.relative_to(root).parts
    if top[0] in {"csrc", "torch_openreg"}:
        return "backend"
    return "/".join(top[:2]) if len(top) > 2 else top[0]


def python_imports(path: Path, root: Path) -> dict[str, tuple[Path, str]]:
    """The names a Python file imports from modules of the project: local name -> (the file
    that defines it, its name there). Scripts import their neighbours by plain name."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return {}
    found = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        parts = (node.module or "").split(".") if node.module else []
        if node.level:
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            candidates = [base.joinpath(*parts)]
        else:
            candidates = [root.joinpath(*parts), path.parent.joinpath(*parts)]
        for stem in candidates:
            module = next((f for f in (stem.with_suffix(".py"), stem / "__init__.py")
                           if f.is_file()), None)
            if module is not None:
                for alias in node.names:
                    found[alias.asname or alias.name] = (module, alias.name)
                break
    return found


def check_helpers_elsewhere(root: Path, files: list[Path], regions: dict[str, Region],
                            used: set[str], report: Report) -> None:
    by_file = regions_by_file(regions)
    cpp = [f for f in files if f.suffix in CPP_SUFFIXES and GENERATED_DIR not in f.parents]
    defined: dict[tuple[str, str], list[tuple[Path, int]]] = {}  # (part, name) -> outside
    shown: set[tuple[str, str]] = set()  # defined or declared in a listed region
    # Python reaches C++ through pybind11 bindings: m.def("_name", ...) in a C++ file, called as
    # _C._name. A listing that calls one needs the binding shown as well.
    bound: dict[str, tuple[Path, int]] = {}
    bound_shown: set[str] = set()
    for path in cpp:
        text = path.read_text(encoding="utf-8")
        file_regions = by_file.get(path, [])
        outside, inside = outside_and_inside(path, text, file_regions)
        part = cpp_part(root, path)
        for name, line in outside.items():
            defined.setdefault((part, name), []).append((path, line))
        shown.update((part, name) for name in inside)
        for m in BINDING_RE.finditer(text):
            bound.setdefault(m.group(1), (path, text.count("\n", 0, m.start()) + 1))
        for region in file_regions:
            if region.name in used:
                code = strip_strings_and_comments(region.text, False)
                shown.update((part, m.group(2)) for m in CPP_DECLARATION_RE.finditer(code)
                             if m.group(1).split()[0] not in NOT_A_TYPE)
                bound_shown.update(m.group(1) for m in BINDING_RE.finditer(region.text))
    python_files: dict[Path, tuple[dict[str, int], set[str]]] = {}
    for path, file_regions in sorted(by_file.items()):
        if GENERATED_DIR in path.parents:
            continue
        for region in sorted(file_regions, key=lambda r: r.start):
            if region.name not in used:
                continue
            if path.suffix in CPP_SUFFIXES:
                code = FOREIGN_RE.sub(" ", strip_strings_and_comments(region.text, False))
                code = re.sub(r"^\s*#\s*include[^\n]*", "", code, flags=re.M)
                part = cpp_part(root, path)
                for name in sorted(set(IDENT_RE.findall(code))):
                    elsewhere = [(f, line) for f, line in defined.get((part, name), [])
                                 if f != path]  # the same file: the rule region-helper
                    if elsewhere and (part, name) not in shown:
                        f, line = elsewhere[0]
                        report.add("region-helper-elsewhere", path, region.start,
                                   f"{region.name} uses {name}, defined at "
                                   f"{f.relative_to(root)}:{line} outside every region: show "
                                   "it in a region of its own")
            elif path.suffix == ".py":
                plain = strip_strings_and_comments(region.text, True)
                for name in sorted(set(BOUND_CALL_RE.findall(plain))):
                    if name in bound and name not in bound_shown:
                        f, line = bound[name]
                        report.add("region-helper-elsewhere", path, region.start,
                                   f"{region.name} calls _C.{name}, bound at "
                                   f"{f.relative_to(root)}:{line} outside every region: show "
                                   "the binding in a region of its own")
                names = python_names(plain)
                for local, (module, name) in sorted(python_imports(path, root).items()):
                    if local not in names or module == path:
                        continue
                    if module not in python_files:
                        python_files[module] = outside_and_inside(
                            module, module.read_text(encoding="utf-8"), by_file.get(module, []))
                    outside, inside = python_files[module]
                    if name in outside and name not in inside:
                        report.add("region-helper-elsewhere", path, region.start,
                                   f"{region.name} uses {local}, defined at "
                                   f"{module.relative_to(root)}:{outside[name]} outside every "
                                   "region: show it in a region of its own")
# LITERALINCLUDE END: WHERE_HELPER_ELSEWHERE_RULE


def check(root: Path) -> list[str]:
    root = root.resolve()
    report = Report(root)
    regions = check_markers(find_markers(source_files(root)), report)
    used = check_includes(find_includes(root / "docs"), regions, report)
    for name, region in sorted(regions.items()):
        if name not in used:
            report.add("marker-unused", region.path, region.start,
                       f"{name} is not included by any chapter")
    check_region_helpers(regions, used, report)
    check_helpers_elsewhere(root, source_files(root), regions, used, report)
    check_chapters(root, report)
    return report.problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="project root (docs/ and the sources below it)")
    args = parser.parse_args(argv)
    problems = check(args.root)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s)" if problems else "anchors OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

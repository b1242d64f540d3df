"""The guide's code index: the sources' marked regions, and where the names they use are defined.

The guide shows code only as regions of real source, each between a START and an END marker
comment of one NAME (the word LITERALINCLUDE, then START or END, a colon and the NAME, behind
`//` or `#`).

A chapter names a region, never a file, so code can move between files without touching the
guide. A region shows what a chapter teaches; a helper the region calls is not wrapped in a
region of its own: `CodeIndex.helpers` finds its definition, and the guide links the listing to
it on the page of its source file. The anchor checker (check_anchors.py) and the guide's
`listing` directive (docs/_ext/listing.py) both read the sources through this module.
"""

from __future__ import annotations

import ast
import bisect
import os
import re
from dataclasses import dataclass
from pathlib import Path

# Spelled in two pieces so this file does not contain markers itself.
TAG = "LITERALINCLUDE" + " "
MARKER_RE = re.compile(TAG + r"(START|END):\s*(\S+)")
NAME_RE = re.compile(r"^[A-Z0-9_]+$")
SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp", ".py", ".toml", ".txt", ".cmake", ".sh"}
SKIP_DIRS = {".git", ".venv", "build", "docs", "tests", "__pycache__", ".pytest_cache", "_build"}
CPP_SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp"}
TEMPLATE_HEAD_RE = re.compile(r"^\s*template\s*<.*>\s*$")  # a C++ template's first line
LANGUAGES = {".py": "python", ".toml": "toml", ".txt": "cmake", ".cmake": "cmake", ".sh": "bash",
             ".c": "c", ".h": "c++", ".hpp": "c++", ".cc": "c++", ".cpp": "c++"}


@dataclass
class Marker:
    kind: str  # START or END
    name: str
    path: Path
    line: int


@dataclass
class Region:
    name: str
    path: Path
    start: int  # line of the START marker
    end: int  # line of the END marker
    text: str

    @property
    def language(self) -> str:
        if self.path.name == "CMakeLists.txt":
            return "cmake"
        return LANGUAGES.get(self.path.suffix, "text")


@dataclass(frozen=True)
class Definition:
    name: str
    path: Path
    line: int


def source_files(root: Path) -> list[Path]:
    """The project's code files outside docs/ and tests/ (whose fixtures are broken on purpose)."""
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.suffix in SOURCE_SUFFIXES or name == "CMakeLists.txt":
                files.append(path)
    return files


def read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def strip_strings_and_comments(code: str, python: bool) -> str:
    """Removes string literals and comments so brackets and words inside them do not count;
    the line breaks of multi-line comments and strings stay, so lines keep their numbers."""
    if python:
        code = re.sub(r'("""|\'\'\')(?:.|\n)*?\1', lambda m: "\n" * m.group(0).count("\n"), code)
        code = re.sub(r"(\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*')", "", code)
        return re.sub(r"#[^\n]*", "", code)
    code = re.sub(r"/\*(?:.|\n)*?\*/", lambda m: "\n" * m.group(0).count("\n"), code)
    code = re.sub(r"//[^\n]*", "", code)
    code = re.sub(r"\"(?:\\.|[^\"\\\n])*\"", "", code)
    return re.sub(r"'(?:\\.|[^'\\\n])*'", "", code)


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


# What a file defines, found by the line that starts the definition. C/C++: a function
# definition at the start of a line (a return type, then the name and its parameters, with its
# body following), a type, a constant or alias, a macro. Python: module-level def, class and
# assignments. CMake: set().
NOT_A_DECLARATION = (r"(?!return\b|else\b|case\b|throw\b|delete\b|new\b|namespace\b"
                     r"|using\b|struct\b|class\b|enum\b|union\b|friend\b|operator\b"
                     r"|[\w:<>,*& \t]*operator\b)")
CPP_DEFINITION_RES = [
    # A function, also a member defined outside its class (void Allocator::free_block(...) {).
    re.compile(r"^ {0,2}" + NOT_A_DECLARATION + r"(?:[\w:<>,*&]+[ \t]+)+[*&]?(?:\w+::)*(\w+)"
               r"\([^;]*?\)[^;{]*\{", re.M | re.S),
    re.compile(r"^ {0,2}(?:template\s*<[^>]*>\s*)?(?:struct|class|enum(?: class)?)\s+(?:\w+\s+)?"
               r"(\w+)\s*(?:final\s*)?[:{]", re.M),
    re.compile(r"^ {0,2}(?:static\s+|inline\s+|thread_local\s+)*constexpr\s+[\w:<>,\s*&]+?\b(\w+)"
               r"\s*(?:\[[^\]]*\]\s*)?[{=]", re.M),
    # A variable of the file (column 0: thread_local int x = 0;) or a data member of a class
    # (two spaces, named like one: std::mutex mu_;). A function's locals are not definitions.
    re.compile(r"^" + NOT_A_DECLARATION + r"(?:static\s+|inline\s+|thread_local\s+|const\s+"
               r"|extern\s+)*[A-Za-z_][\w:]*(?:<[^;{}()\n]*>)?[ \t*&]+(\w+)\s*(?:\[[^\]]*\]\s*)?"
               r"(?:=[^=]|;|\{)", re.M),
    re.compile(r"^ {2,4}" + NOT_A_DECLARATION + r"(?:mutable\s+|static\s+|const\s+)*[A-Za-z_][\w:]*"
               r"(?:<[^;{}()\n]*>)?[ \t*&]+(\w+_)\s*(?:\[[^\]]*\]\s*)?(?:=[^=]|;|\{)", re.M),
    re.compile(r"^ {0,2}(?:template\s*<[^>]*>\s*)?(?:struct|class)\s+(\w+)\s+final\b", re.M),
    re.compile(r"^ {0,2}using\s+(\w+)\s*=", re.M),
    re.compile(r"^typedef\s+(?:struct|enum|union)\s*\w*\s*\{[^}]*\}\s*(\w+)\s*;", re.M),
    re.compile(r"^typedef\s+[^;{(]*?\b(\w+)\s*;", re.M),
    re.compile(r"^#define\s+(\w+)", re.M),
]
PY_DEFINITION_RES = [
    re.compile(r"^(?:async\s+)?def\s+(\w+)", re.M),
    re.compile(r"^class\s+(\w+)", re.M),
    re.compile(r"^(\w+)\s*(?::[^=\n]+)?=[^=]", re.M),
]
CMAKE_DEFINITION_RES = [re.compile(r"^\s*(?:set|function|macro)\((\w+)", re.M | re.I)]
IDENT_RE = re.compile(r"[A-Za-z_]\w*")
KEYWORD_ARGUMENT_RE = re.compile(r"([(,]\s*)\w+\s*=(?!=)")
NOT_A_NAME = {"if", "for", "while", "switch", "return", "sizeof", "catch", "else", "operator",
              "void", "int", "bool", "char", "auto", "const", "static", "inline", "struct",
              "final", "override", "public", "private", "protected", "alignas", "decltype"}
# A prototype (a member declared in a class the region shows) declares the name in the region.
PROTOTYPE_RE = re.compile(r"^[ \t]*((?:[\w:<>,*&]+[ \t]+)+)[*&]?(\w+)\([^;{}]*\)[^;{}=]*;", re.M)
# A name the region declares itself (a parameter or a local: a type, then the name) is local,
# whatever files of the project define the same word.
LOCAL_DECLARATION_RE = re.compile(
    r"(?:^|[(,{;])[ \t]*(?:const[ \t]+|static[ \t]+|constexpr[ \t]+)*"
    r"([A-Za-z_][\w:]*(?:<(?:[^<>;{}()]|<[^<>;{}()]*>)*>)?)[ \t]*[&*]*(?:\.\.\.)?[ \t]+[&*]*"
    r"(\w+)[ \t]*"
    r"(?=[=;,)\[{]|:(?!:)|\(\w)", re.M)
NOT_A_TYPE = {"return", "throw", "else", "case", "delete", "new", "co_return", "goto", "using",
              "typename", "class", "struct", "namespace"}
# A member (x.name, p->name) or a qualified name (std::name, Function::apply) is not the free
# helper of ours with the same word; only names in our own namespaces (openreg::name,
# detail::name) are.
FOREIGN_RE = re.compile(r"(?:\.|->|\b\w+::)\s*\w+")
OURS_RE = re.compile(r"\b(?:(?:c10|at)::)?(?:native::)?(?:openreg|detail)::")
BINDING_RE = re.compile(r"\bm\.def\(\s*\"(\w+)\"")
BOUND_CALL_RE = re.compile(r"\b_C\.(\w+)")


def definitions(text: str, path: Path) -> list[tuple[str, int]]:
    """(name, line) of each definition in a file's text, in file order."""
    if path.suffix == ".py":
        patterns = PY_DEFINITION_RES
    elif path.suffix in CPP_SUFFIXES:
        patterns = CPP_DEFINITION_RES
    elif path.suffix == ".cmake" or path.name == "CMakeLists.txt":
        patterns = CMAKE_DEFINITION_RES
    else:
        return []
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    found = {(m.group(1), bisect.bisect_right(line_starts, m.start(1)))
             for pattern in patterns for m in pattern.finditer(text)}
    return sorted((d for d in found if d[0] not in NOT_A_NAME and len(d[0]) > 1),
                  key=lambda d: d[1])


def python_names(code: str) -> set[str]:
    """The names a stripped Python listing uses as variables: not attributes (x.name) and not
    keyword arguments (f(name=...)), which name nothing of the module's."""
    code = re.sub(r"\.\s*\w+", " ", KEYWORD_ARGUMENT_RE.sub(r"\1", code))
    return set(IDENT_RE.findall(code))


def cpp_part(root: Path, path: Path) -> str:
    """The part of the project a C/C++ file belongs to: the backend (csrc/ and its Python
    bindings), the driver, or one example or benchmark program. Parts reach each other only
    through the driver's C API header."""
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


class CodeIndex:
    """Every region of the sources under `root`, and the definitions the regions' code uses.

    `problems` lists what is wrong with the markers themselves as (rule, path, line, message).
    """

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.files = source_files(self.root)
        self.texts = {path: text for path in self.files if (text := read(path)) is not None}
        self.problems: list[tuple[str, Path, int, str]] = []
        self.regions = self._collect_regions()
        self._defs = {path: definitions(text, path) for path, text in self.texts.items()}
        self._by_part: dict[tuple[str, str], list[Definition]] = {}
        self._bindings: dict[str, Definition] = {}
        self._api: dict[str, Definition] = {}  # the driver's C API, declared in include/
        for path, defs in self._defs.items():
            if path.suffix in CPP_SUFFIXES:
                part = cpp_part(self.root, path)
                for name, line in defs:
                    self._by_part.setdefault((part, name), []).append(Definition(name, path, line))
                text = self.texts[path]
                if "include" in path.relative_to(self.root).parts:  # a C API any part may call
                    plain = strip_strings_and_comments(text, False)  # keeps the line breaks
                    for m in PROTOTYPE_RE.finditer(plain):
                        if m.group(1).split()[0] not in NOT_A_TYPE:
                            line = plain.count("\n", 0, m.start(2)) + 1
                            self._api.setdefault(m.group(2), Definition(m.group(2), path, line))
                for m in BINDING_RE.finditer(text):
                    line = text.count("\n", 0, m.start()) + 1
                    name = m.group(1)
                    self._bindings.setdefault(name, Definition("_C." + name, path, line))

    def _includes(self, path: Path) -> set[str]:
        """The file names a C/C++ file includes with quotes (its own headers), and its own."""
        found = set(re.findall(r'^\s*#\s*include\s+"(?:[^"]*/)?([^"/]+)"', self.texts[path], re.M))
        return found | {path.name, path.with_suffix(".h").name}

    def _line(self, d: Definition) -> str:
        return self.texts[d.path].splitlines()[d.line - 1]

    def _is_member(self, d: Definition) -> bool:
        """A definition inside a class body (indented) or of a member out of it (Class::name)."""
        text = self._line(d)
        return text[:1] in (" ", "\t") or f"::{d.name}(" in text

    def _problem(self, rule: str, path: Path, line: int, message: str) -> None:
        self.problems.append((rule, path, line, message))

    def _collect_regions(self) -> dict[str, Region]:
        by_name: dict[str, list[Marker]] = {}
        for path, text in self.texts.items():
            for number, line in enumerate(text.splitlines(), 1):
                for m in MARKER_RE.finditer(line):
                    by_name.setdefault(m.group(2), []).append(Marker(m.group(1), m.group(2), path,
                                                                     number))
        regions: dict[str, Region] = {}
        for name, found in sorted(by_name.items()):
            first = found[0]
            if not NAME_RE.match(name):
                self._problem("marker-name", first.path, first.line,
                              f"marker name {name!r} is not [A-Z0-9_]+")
            starts = [m for m in found if m.kind == "START"]
            ends = [m for m in found if m.kind == "END"]
            if len(starts) != 1 or len(ends) != 1:
                self._problem("marker-pair", first.path, first.line,
                              f"{name}: {len(starts)} START and {len(ends)} END markers "
                              "(need one of each)")
                continue
            start, end = starts[0], ends[0]
            if start.path != end.path or end.line <= start.line:
                self._problem("marker-pair", start.path, start.line,
                              f"{name}: END must follow START in the same file")
                continue
            lines = self.texts[start.path].splitlines()
            body = "\n".join(lines[start.line:end.line - 1])
            regions[name] = Region(name, start.path, start.line, end.line, body)
            if not body.strip():
                self._problem("marker-empty", start.path, start.line,
                              f"{name}: the region is empty")
            elif not brackets_balance(body, start.path.suffix == ".py"):
                self._problem("marker-braces", start.path, start.line,
                              f"{name}: brackets do not balance, so the region splits a "
                              "declaration")
            elif start.line >= 2 and TEMPLATE_HEAD_RE.match(lines[start.line - 2]):
                self._problem("marker-braces", start.path, start.line,
                              f"{name}: the template line above START is left out of the region")
        for outer in regions.values():
            for inner in regions.values():
                if (inner is not outer and inner.path == outer.path
                        and outer.start < inner.start < outer.end):
                    self._problem("marker-nested", inner.path, inner.start,
                                  f"{inner.name} starts inside {outer.name} "
                                  f"(lines {outer.start}-{outer.end})")
        names = sorted(by_name)
        for a in names:
            for b in names:
                if a != b and b.startswith(a):
                    first = by_name[a][0]
                    self._problem("marker-prefix", first.path, first.line,
                                  f"{a} is a prefix of {b}: a reader searching the source for "
                                  "one finds the other")
        return regions

    # LITERALINCLUDE START: WHERE_HELPERS
    def helpers(self, region: Region) -> list[Definition]:
        """The project's definitions that `region` uses but does not contain, best first: the
        same file, then (C/C++) the same part of the project, (Python) the modules it imports
        from, and the pybind11 binding of each `_C._name` it calls."""
        path = region.path
        inside = range(region.start, region.end + 1)
        found: dict[str, list[Definition]] = {}
        if path.suffix in CPP_SUFFIXES:
            plain = strip_strings_and_comments(region.text, False)
            plain = re.sub(r"^\s*#\s*include[^\n]*", "", plain, flags=re.M)
            code = FOREIGN_RE.sub(" ", OURS_RE.sub(" ", plain))
            names = set(IDENT_RE.findall(code))
            own = {name for name, line in self._defs.get(path, []) if line in inside}
            own |= {name for kind, name in LOCAL_DECLARATION_RE.findall(plain)
                    if kind not in NOT_A_TYPE}
            own |= {name for kind, name in PROTOTYPE_RE.findall(plain)
                    if kind.split()[0] not in NOT_A_TYPE}
            own |= set(re.findall(r"[\[,]\s*&?(\w+)\s*=(?!=)", plain))  # lambda init-captures
            for names_ in re.findall(r"\bauto\s*&{0,2}\s*\[([^\]]+)\]", plain):  # auto& [a, b]
                own |= set(IDENT_RE.findall(names_))
            for params in re.findall(r"#\s*define\s+\w+\(([^)]*)\)", plain):  # macro parameters
                own |= set(IDENT_RE.findall(params))
            part = cpp_part(self.root, path)
            classes = set(re.findall(r"\b(\w+)::~?\w+\s*\(", plain))  # members it defines
            for name in sorted(names - own):
                defs = self._by_part.get((part, name), [])
                same = [d for d in defs if d.path == path]
                if not defs and name in self._api and self._api[name].path != path:
                    defs = [self._api[name]]
                free = [d for d in defs if not self._is_member(d)]
                defs = free or defs  # an unqualified call reaches a free function first
                near = [d for d in defs if d.path.name in self._includes(path)]
                defs = near or defs  # a header the file includes names what it means
                own_class = [d for d in defs if any(f"{c}::{d.name}(" in self._line(d)
                                                    for c in classes)]
                defs = own_class or defs  # in a member of C, a call reaches C's member first
                if defs:
                    first_per_file = {d.path: d for d in reversed(defs)}  # the first of each file
                    found[name] = same[:1] or sorted(first_per_file.values(),
                                                     key=lambda d: (str(d.path), d.line))
        elif path.suffix == ".py":
            plain = strip_strings_and_comments(region.text, True)
            names = python_names(plain)
            module_defs = {name: line for name, line in self._defs.get(path, [])
                           if line not in inside}
            own = {name for name, line in self._defs.get(path, []) if line in inside}
            for name in sorted(names - own):
                if name in module_defs:
                    found[name] = [Definition(name, path, module_defs[name])]
            for local, (module, name) in sorted(python_imports(path, self.root).items()):
                if local in names and module != path and module in self._defs:
                    lines = [line for n, line in self._defs[module] if n == name]
                    if lines:
                        found[local] = [Definition(local, module, lines[0])]
            for name in sorted(set(BOUND_CALL_RE.findall(plain))):
                if name in self._bindings:
                    found["_C." + name] = [self._bindings[name]]
        else:
            code = re.sub(r"#[^\n]*", "", region.text)
            names = set(re.findall(r"\$\{(\w+)\}", code))
            for name in sorted(names):
                defs = [Definition(name, p, line) for p, ds in self._defs.items()
                        for n, line in ds if n == name and line not in inside]
                if defs:
                    found[name] = defs[:1]
        return [d for name in sorted(found) for d in found[name]]
    # LITERALINCLUDE END: WHERE_HELPERS


def label(root: Path, path: Path, name: str | None = None) -> str:
    """The guide's label of a source file's page, or of one definition on it."""
    rel = path.relative_to(root).as_posix()
    # Labels are case-insensitive and punctuation becomes "-": a capital becomes "0" and its
    # letter and an underscore "1", so Stream and stream, add and add_ get labels of their own.
    name = re.sub(r"[A-Z_]", lambda m: "1" if m.group(0) == "_" else "0" + m.group(0), name or "")
    slug = re.sub(r"[^a-z0-9]+", "-", f"{rel} {name}".lower()).strip("-")
    return "code-" + slug


def page_name(root: Path, path: Path) -> str:
    """The docname of a source file's page: code/csrc/runtime/OpenRegGuard.cpp."""
    return "code/" + path.relative_to(root).as_posix()

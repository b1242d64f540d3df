"""The anchor checker (tools/check_anchors.py) on the real guide, and on broken fixtures.

Each fixture is a tiny project (docs/ plus one source file) broken in one way; the test proves
the rule for that way fires, with the file and line of the problem.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT

CHECKER = ROOT / "tools" / "check_anchors.py"
S, E = "LITERALINCLUDE START: ", "LITERALINCLUDE END: "


def include(name: str, path: str = "../src/lib.cpp", extra: str = "") -> str:
    return (f"```{{literalinclude}} {path}\n:language: c++\n:start-after: {S}{name}\n"
            f":end-before: {E}{name}\n{extra}```\n")


def make_project(tmp_path: Path, source: str, doc: str, suffix: str = ".cpp") -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "src" / f"lib{suffix}").write_text(textwrap.dedent(source))
    (tmp_path / "docs" / "chapter.md").write_text(doc)
    return tmp_path


def run_checker(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECKER), "--root", str(root)],
                          capture_output=True, text=True)


GOOD_SOURCE = f"""\
    int before = 0;
    // {S}GOOD_REGION
    int add(int a, int b) {{
      return a + b;
    }}
    // {E}GOOD_REGION
    """


def test_the_guide_passes():
    result = run_checker(ROOT)
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip() == "anchors OK"


def test_a_correct_fixture_passes(tmp_path):
    result = run_checker(make_project(tmp_path, GOOD_SOURCE, include("GOOD_REGION")))
    assert result.returncode == 0, result.stdout


BROKEN = {
    "include-file": (GOOD_SOURCE, include("GOOD_REGION", path="../src/missing.cpp"),
                     "docs/chapter.md:1: [include-file] ../src/missing.cpp does not exist"),
    "include-markers-unknown": (GOOD_SOURCE, include("GOOD_REGION") + include("OTHER_REGION"),
                                "docs/chapter.md:6: [include-markers] no region named OTHER_REGION"),
    "include-markers-mismatch": (
        GOOD_SOURCE,
        f"```{{literalinclude}} ../src/lib.cpp\n:start-after: {S}GOOD_REGION\n"
        f":end-before: {E}OTHER\n```\n",
        "[include-markers] START GOOD_REGION and END OTHER name different regions"),
    "include-markers-missing": (GOOD_SOURCE,
                                "```{literalinclude} ../src/lib.cpp\n:language: c++\n```\n",
                                "docs/chapter.md:1: [include-markers] needs :start-after:"),
    "include-lines": (GOOD_SOURCE, include("GOOD_REGION", extra=":lines: 2-4\n"),
                      "docs/chapter.md:1: [include-lines] :lines: ranges drift"),
    "marker-name": (f"// {S}lower_case\nint x;\n// {E}lower_case\n", include("lower_case"),
                    "src/lib.cpp:1: [marker-name] marker name 'lower_case' is not [A-Z0-9_]+"),
    "marker-pair-duplicate": (GOOD_SOURCE + f"// {S}GOOD_REGION\nint y;\n",
                              include("GOOD_REGION"),
                              "[marker-pair] GOOD_REGION: 2 START and 1 END markers"),
    "marker-pair-order": (f"// {E}BACKWARDS\nint x;\n// {S}BACKWARDS\n", include("BACKWARDS"),
                          "src/lib.cpp:3: [marker-pair] BACKWARDS: END must follow START"),
    "marker-empty": (f"// {S}EMPTY\n\n// {E}EMPTY\n", include("EMPTY"),
                     "src/lib.cpp:1: [marker-empty] EMPTY: the region is empty"),
    "marker-nested": (f"// {S}OUTER\nint a;\n// {S}INNER\nint b;\n// {E}INNER\n// {E}OUTER\n",
                      include("OUTER") + include("INNER"),
                      "src/lib.cpp:3: [marker-nested] INNER starts inside OUTER"),
    "marker-prefix": (f"// {S}GUARD\nint a;\n// {E}GUARD\n// {S}GUARD_EVENTS\nint b;\n"
                      f"// {E}GUARD_EVENTS\n", include("GUARD") + include("GUARD_EVENTS"),
                      "src/lib.cpp:1: [marker-prefix] GUARD is a prefix of GUARD_EVENTS"),
    "marker-braces": (f"struct S {{\n// {S}HALF\n  int a;\n}};\nint f() {{\n// {E}HALF\n"
                      "  return 0;\n}\n", include("HALF"),
                      "src/lib.cpp:2: [marker-braces] HALF: brackets do not balance"),
    "marker-unused": (GOOD_SOURCE + f"// {S}NOBODY_READS\nint z;\n// {E}NOBODY_READS\n",
                      include("GOOD_REGION"),
                      "[marker-unused] NOBODY_READS is not included by any chapter"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_rule_fires(tmp_path, case):
    source, doc, expected = BROKEN[case]
    result = run_checker(make_project(tmp_path, source, doc))
    assert result.returncode == 1, result.stdout
    assert expected in result.stdout, result.stdout


def test_braces_in_strings_and_comments_do_not_count(tmp_path):
    source = f'// {S}TRICKY\nconst char* s = "}}";  // {{ in a comment\nint x;\n// {E}TRICKY\n'
    assert run_checker(make_project(tmp_path, source, include("TRICKY"))).returncode == 0


def test_python_regions_are_checked_for_balance(tmp_path):
    source = f"# {S}PY_HALF\nvalue = compute(\n# {E}PY_HALF\n    1)\n"
    doc = include("PY_HALF", path="../src/lib.py")
    result = run_checker(make_project(tmp_path, source, doc, suffix=".py"))
    assert "[marker-braces] PY_HALF" in result.stdout

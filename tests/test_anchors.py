"""The anchor checker (tools/check_anchors.py) on the real guide, and on broken fixtures.

Each fixture is a tiny project (docs/, one source file, the chapter's test file) broken in one
way; the test proves the rule for that way fires, with the file and line of the problem.
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
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_chapter.py").write_text("def test_chapter():\n    pass\n")
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


BROKEN["region-helper"] = (
    f"const int kScale = 3;\nint scale(int a) {{\n  return a * kScale;\n}}\n"
    f"// {S}USES_HELPER\nint twice_scaled(int a) {{\n  return 2 * scale(a);\n}}\n"
    f"// {E}USES_HELPER\n", include("USES_HELPER"),
    "src/lib.cpp:5: [region-helper] USES_HELPER uses scale, defined at line 2 outside every "
    "region")


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


# ---- one name per chapter: docs/<name>.md, examples/<name>[_<what>].py, tests/test_<name>.py ----

RUNS = 'from conftest import run_example\n\n\ndef test_example():\n    run_example("{}")\n'


def chapter_project(tmp_path: Path, examples: dict[str, str], tests: dict[str, str],
                    chapters: dict[str, str]) -> Path:
    """A project of chapters (no code listings), examples and tests, written as given."""
    for folder, files in (("docs", chapters), ("examples", examples), ("tests", tests)):
        (tmp_path / folder).mkdir()
        for name, text in files.items():
            (tmp_path / folder / name).write_text(text)
    return tmp_path


def show(example: str) -> str:
    return f"```{{run-example}} ../examples/{example}\n```\n"


GOOD_CHAPTERS = (
    {"random_numbers.py": "print(1)\n", "random_numbers_state.py": "print(2)\n",
     "quickstart.py": "print(3)\n", "device_kernels.py": "print(4)\n"},
    {"test_random_numbers.py": RUNS.format("random_numbers.py")
     + RUNS.format("random_numbers_state.py"),
     "test_quickstart.py": RUNS.format("quickstart.py"),
     "test_device.py": "def test_device():\n    pass\n",
     "test_device_kernels.py": RUNS.format("device_kernels.py")},
    {"random-numbers.md": "# R\n\n" + show("random_numbers.py"),
     "index.md": show("quickstart.py"),
     "device.md": "# D\n", "device-kernels.md": show("device_kernels.py"),
     "op-coverage.md": "# generated, not a chapter\n"})


def test_chapters_examples_and_tests_that_share_names_pass(tmp_path):
    result = run_checker(chapter_project(tmp_path, *GOOD_CHAPTERS))
    assert result.returncode == 0, result.stdout


BROKEN_CHAPTERS = {
    "chapter-test": (
        {}, {}, {"hooks.md": "# Hooks\n"},
        "docs/hooks.md:1: [chapter-test] the chapter has no tests/test_hooks.py"),
    "chapter-test-index": (
        {}, {}, {"index.md": "# Index\n"},
        "docs/index.md:1: [chapter-test] the chapter has no tests/test_quickstart.py"),
    "example-chapter": (
        {"helpers.py": "print(1)\n"}, {"test_streams.py": ""}, {"streams.md": "# S\n"},
        "examples/helpers.py:1: [example-chapter] helpers.py belongs to no chapter"),
    "example-test": (
        {"streams_events.py": "print(1)\n"}, {"test_streams.py": RUNS.format("other.py")},
        {"streams.md": "# S\n"},
        "examples/streams_events.py:1: [example-test] streams_events.py belongs to streams.md, "
        "but tests/test_streams.py does not run it"),
    "example-test-name-inside-another": (  # test_streams.py names streams.py only as a suffix
        {"streams.py": "print(1)\n"}, {"test_streams.py": "# see tests/test_streams.py\n"},
        {"streams.md": "# S\n"},
        "[example-test] streams.py belongs to streams.md, "
        "but tests/test_streams.py does not run it"),
    "example-untested": (
        {"memory.py": "print(1)\n"}, {"test_memory.py": "", "test_streams.py": ""},
        {"memory.md": "# M\n", "streams.md": "# S\n\n" + show("memory.py")},
        "docs/streams.md:3: [example-untested] ../examples/memory.py is shown by the chapter but "
        "no test runs it"),
}


@pytest.mark.parametrize("case", sorted(BROKEN_CHAPTERS))
def test_each_chapter_rule_fires(tmp_path, case):
    examples, tests, chapters, expected = BROKEN_CHAPTERS[case]
    result = run_checker(chapter_project(tmp_path, examples, tests, chapters))
    assert result.returncode == 1, result.stdout
    assert expected in result.stdout, result.stdout


def test_an_example_belongs_to_the_longest_chapter_name(tmp_path):
    """device_kernels.py belongs to device-kernels.md, so test_device.py need not run it."""
    examples, tests, chapters = GOOD_CHAPTERS
    tests = {**tests, "test_device_kernels.py": ""}
    result = run_checker(chapter_project(tmp_path, examples, tests, chapters))
    assert "examples/device_kernels.py:1: [example-test] device_kernels.py belongs to " \
           "device-kernels.md, but tests/test_device_kernels.py" in result.stdout, result.stdout


def test_a_helper_shown_in_its_own_region_passes(tmp_path):
    source = (f"// {S}THE_HELPER\nint scale(int a) {{\n  return a * 3;\n}}\n// {E}THE_HELPER\n"
              f"// {S}USES_HELPER\nint twice_scaled(int a) {{\n  return 2 * scale(a);\n}}\n"
              f"// {E}USES_HELPER\n")
    doc = include("THE_HELPER") + include("USES_HELPER")
    result = run_checker(make_project(tmp_path, source, doc))
    assert result.returncode == 0, result.stdout


def test_python_helpers_outside_regions_are_reported(tmp_path):
    source = (f"LIMIT = 4\n\n\ndef clamp(x):\n    return min(x, LIMIT)\n\n\n"
              f"# {S}PY_USES\ndef clamp_all(xs):\n    return [clamp(x) for x in xs]\n"
              f"# {E}PY_USES\n")
    result = run_checker(make_project(tmp_path, source, include("PY_USES", path="../src/lib.py"),
                                      suffix=".py"))
    assert result.returncode == 1
    assert "[region-helper] PY_USES uses clamp, defined at line 4 outside every region" in \
        result.stdout
    assert "LIMIT" not in result.stdout  # used by the helper, not by the listing


def test_a_keyword_argument_is_not_a_helper(tmp_path):
    """f(device="x") names f's parameter, not the module's variable of the same name."""
    source = (f"device = 'cpu'\n\n\n# {S}PY_KEYWORD\ndef make(f):\n"
              f"    return f(1, device='openreg') == f(device ==1)\n# {E}PY_KEYWORD\n")
    result = run_checker(make_project(tmp_path, source, include("PY_KEYWORD", path="../src/lib.py"),
                                      suffix=".py"))
    assert result.returncode == 1  # the comparison is a use
    assert "[region-helper] PY_KEYWORD uses device, defined at line 1" in result.stdout
    fixed = source.replace("f(device ==1)", "f(device=1)")
    (tmp_path / "src" / "lib.py").write_text(fixed)
    result = run_checker(tmp_path)
    assert result.returncode == 0, result.stdout


# ---- helpers in other files of the project: region-helper-elsewhere ----

def two_file_project(tmp_path: Path, files: dict[str, str], doc: str) -> Path:
    make_project(tmp_path, "", doc)
    (tmp_path / "src" / "lib.cpp").unlink()
    for name, text in files.items():
        (tmp_path / "src" / name).write_text(textwrap.dedent(text))
    return tmp_path


HELPER_CPP = "int scale(int a) {\n  return a * 3;\n}\n"
USES_SCALE = (f"int scale(int a);\n// {S}USES_SCALE\nint twice_scaled(int a) {{\n"
              f"  return 2 * scale(a);\n}}\n// {E}USES_SCALE\n")


def test_a_cpp_helper_of_another_file_is_reported(tmp_path):
    root = two_file_project(tmp_path, {"helper.cpp": HELPER_CPP, "lib.cpp": USES_SCALE},
                            include("USES_SCALE"))
    result = run_checker(root)
    assert result.returncode == 1
    assert ("src/lib.cpp:2: [region-helper-elsewhere] USES_SCALE uses scale, defined at "
            "src/helper.cpp:1 outside every region") in result.stdout, result.stdout


def test_a_listed_prototype_shows_the_helper(tmp_path):
    """A C API: the header's listing declares the function, its definition stays unlisted."""
    header = f"// {S}THE_API\nint scale(int a);\n// {E}THE_API\n"
    root = two_file_project(tmp_path, {"helper.cpp": HELPER_CPP, "api.h": header,
                                       "lib.cpp": USES_SCALE},
                            include("THE_API", path="../src/api.h") + include("USES_SCALE"))
    result = run_checker(root)
    assert result.returncode == 0, result.stdout


def test_members_and_other_libraries_names_are_not_helpers(tmp_path):
    uses = (f"// {S}USES_MEMBERS\nint f(const Thing& t) {{\n  return t.scale(2) + "
            f"std::scale(3);\n}}\n// {E}USES_MEMBERS\n")
    root = two_file_project(tmp_path, {"helper.cpp": HELPER_CPP, "lib.cpp": uses},
                            include("USES_MEMBERS"))
    assert run_checker(root).returncode == 0


BINDING = 'void bind(py::module_& m) {\n  m.def("_scale", [](int a) { return 3 * a; });\n}\n'
PY_ELSEWHERE = {
    "imported helper": (
        {"helpers.py": "def clamp(x):\n    return min(x, 4)\n",
         "lib.py": (f"from helpers import clamp\n\n\n# {S}PY_USES_ELSEWHERE\ndef clamp_all(xs):\n"
                    f"    return [clamp(x) for x in xs]\n# {E}PY_USES_ELSEWHERE\n")},
        "uses clamp, defined at src/helpers.py:1 outside every region"),
    "binding": (
        {"bindings.cpp": BINDING,
         "lib.py": (f"from pkg import _C\n\n\n# {S}PY_USES_ELSEWHERE\ndef scaled(a):\n"
                    f"    return _C._scale(a)\n# {E}PY_USES_ELSEWHERE\n")},
        "calls _C._scale, bound at src/bindings.cpp:2 outside every region"),
}


@pytest.mark.parametrize("case", sorted(PY_ELSEWHERE))
def test_a_python_helper_of_another_file_is_reported(tmp_path, case):
    files, expected = PY_ELSEWHERE[case]
    root = two_file_project(tmp_path, files, include("PY_USES_ELSEWHERE", path="../src/lib.py"))
    result = run_checker(root)
    assert result.returncode == 1
    assert f"src/lib.py:4: [region-helper-elsewhere] PY_USES_ELSEWHERE {expected}" in \
        result.stdout, result.stdout


def test_a_shown_binding_passes(tmp_path):
    uses = (f"from pkg import _C\n\n\n# {S}PY_CALLS_BINDING\ndef scaled(a):\n"
            f"    return _C._scale(a)\n# {E}PY_CALLS_BINDING\n")
    shown = f"// {S}THE_BINDING\n{BINDING}// {E}THE_BINDING\n"
    root = two_file_project(tmp_path, {"bindings.cpp": shown, "lib.py": uses},
                            include("THE_BINDING", path="../src/bindings.cpp")
                            + include("PY_CALLS_BINDING", path="../src/lib.py"))
    result = run_checker(root)
    assert result.returncode == 0, result.stdout


def test_a_template_line_left_above_the_region_is_reported(tmp_path):
    source = (f"template <class T>\n// {S}HALF_TEMPLATE\nvoid release(void* p) {{\n"
              f"  delete static_cast<T*>(p);\n}}\n// {E}HALF_TEMPLATE\n")
    result = run_checker(make_project(tmp_path, source, include("HALF_TEMPLATE")))
    assert result.returncode == 1
    assert ("src/lib.cpp:2: [marker-braces] HALF_TEMPLATE: the template line above START is left "
            "out of the region") in result.stdout, result.stdout

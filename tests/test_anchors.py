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


def include(name: str, path: str = "", extra: str = "") -> str:
    """A chapter's listing of region `name` (the path is not needed: regions are found by name)."""
    return f"```{{listing}} {name}\n{extra}```\n"


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
    "listing-name": (GOOD_SOURCE, include("GOOD_REGION") + include("OTHER_REGION"),
                     "docs/chapter.md:3: [listing-name] no region named OTHER_REGION"),
    "listing-only": (GOOD_SOURCE,
                     include("GOOD_REGION") + f"```{{literalinclude}} ../src/lib.cpp\n"
                     f":start-after: {S}GOOD_REGION\n:end-before: {E}GOOD_REGION\n```\n",
                     "docs/chapter.md:3: [listing-only] show code with ```{listing} NAME"),
    "listing-only-lines": (GOOD_SOURCE, include("GOOD_REGION", extra=":lines: 2-4\n"),
                           "docs/chapter.md:2: [listing-only]"),
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
                      "[marker-unused] NOBODY_READS is not listed by any chapter"),
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
    doc = include("PY_HALF")
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
        "docs/streams.md:1: [example-untested] memory.py is shown by the chapter but "
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


# ---- helpers: what the guide links below a listing (tools/regions.py, CodeIndex.helpers) ----

def helpers_of(tmp_path: Path, files: dict[str, str], name: str) -> list[str]:
    """The helpers the guide would link below region `name`, as 'name@file:line'."""
    sys.path.insert(0, str(ROOT / "tools"))
    import regions

    (tmp_path / "src").mkdir(exist_ok=True)
    for file, text in files.items():
        (tmp_path / "src" / file).write_text(textwrap.dedent(text))
    index = regions.CodeIndex(tmp_path)
    return [f"{d.name}@{d.path.name}:{d.line}" for d in index.helpers(index.regions[name])]


HELPER_CPP = "int scale(int a) {\n  return a * 3;\n}\n"
USES_SCALE = (f"int scale(int a);\n// {S}USES_SCALE\nint twice_scaled(int a) {{\n"
              f"  return 2 * scale(a);\n}}\n// {E}USES_SCALE\n")


def test_a_helper_of_the_same_file_is_linked(tmp_path):
    source = (f"const int kScale = 3;\nint scale(int a) {{\n  return a * kScale;\n}}\n"
              f"// {S}USES_HELPER\nint twice_scaled(int a) {{\n  return 2 * scale(a);\n}}\n"
              f"// {E}USES_HELPER\n")
    # kScale is used by the helper, not by the listing: the reader finds it beside the helper.
    assert helpers_of(tmp_path, {"lib.cpp": source}, "USES_HELPER") == ["scale@lib.cpp:2"]


def test_a_helper_of_another_file_of_the_same_part_is_linked(tmp_path):
    files = {"helper.cpp": HELPER_CPP, "lib.cpp": USES_SCALE}
    assert helpers_of(tmp_path, files, "USES_SCALE") == ["scale@helper.cpp:1"]


def test_locals_members_and_other_libraries_names_are_not_helpers(tmp_path):
    uses = (f"// {S}USES_MEMBERS\nint f(const Thing& t, int scale) {{\n  return t.scale(2) + "
            f"std::scale(3) + scale;\n}}\n// {E}USES_MEMBERS\n")
    assert helpers_of(tmp_path, {"helper.cpp": HELPER_CPP, "lib.cpp": uses}, "USES_MEMBERS") == []


def test_python_helpers_imports_and_bindings_are_linked(tmp_path):
    files = {
        "helpers.py": "def clamp(x):\n    return min(x, 4)\n",
        "bindings.cpp": ('void bind(py::module_& m) {\n'
                         '  m.def("_scale", [](int a) { return a; });\n}\n'),
        "lib.py": (f"from helpers import clamp\nfrom pkg import _C\nLIMIT = 4\n\n\n# {S}PY_USES\n"
                   f"def clamp_all(xs, device='cpu'):\n"
                   f"    return [_C._scale(clamp(x)) for x in xs if x < LIMIT]\n# {E}PY_USES\n"),
    }
    assert helpers_of(tmp_path, files, "PY_USES") == [
        "LIMIT@lib.py:3", "_C._scale@bindings.cpp:2", "clamp@helpers.py:1"]


def test_a_keyword_argument_is_not_a_helper(tmp_path):
    """f(device="x") names f's parameter, not the module's variable of the same name."""
    source = (f"device = 'cpu'\n\n\n# {S}PY_KEYWORD\ndef make(f):\n"
              f"    return f(1, device='openreg')\n# {E}PY_KEYWORD\n")
    assert helpers_of(tmp_path, {"lib.py": source}, "PY_KEYWORD") == []


def test_a_template_line_left_above_the_region_is_reported(tmp_path):
    source = (f"template <class T>\n// {S}HALF_TEMPLATE\nvoid release(void* p) {{\n"
              f"  delete static_cast<T*>(p);\n}}\n// {E}HALF_TEMPLATE\n")
    result = run_checker(make_project(tmp_path, source, include("HALF_TEMPLATE")))
    assert result.returncode == 1
    assert ("src/lib.cpp:2: [marker-braces] HALF_TEMPLATE: the template line above START is left "
            "out of the region") in result.stdout, result.stdout


def test_a_member_defined_outside_its_class_is_linked_and_calls_are_not_definitions(tmp_path):
    files = {
        "pool.cpp": ("struct Pool final {\n  int take(int n);\n};\n\n"
                     "int Pool::take(int n) {\n  return n;\n}\n\n"
                     "int use(Pool& p) {\n  return take_all(p, [&](int x) {\n"
                     "    return x;\n  });\n}\n"),
        "lib.cpp": (f"// {S}USES_POOL\nint twice(Pool& p) {{\n  return 2 * take(1) * kLimit;\n}}\n"
                    f"// {E}USES_POOL\nconstexpr const char* kLimit[] = {{\"a\"}};\n"),
    }
    # take: the member's definition, not a call site; kLimit: an array constant; Pool: a final class
    assert helpers_of(tmp_path, files, "USES_POOL") == [
        "Pool@pool.cpp:1", "kLimit@lib.cpp:6", "take@pool.cpp:5"]


def test_labels_tell_a_class_from_a_function_of_the_same_name():
    sys.path.insert(0, str(ROOT / "tools"))
    import regions

    path = ROOT / "torch_openreg" / "openreg" / "streams.py"
    assert regions.label(ROOT, path, "Stream") != regions.label(ROOT, path, "stream")


def test_parameters_bindings_and_members_of_the_region_class(tmp_path):
    files = {
        "other.cpp": ("int device(int x) {\n  return x;\n}\n"
                      "struct Log {\n  void record(int x);\n};\nvoid Log::record(int x) {}\n"),
        "pool.cpp": ("struct Pool {\n  void record(int x);\n  int take(int n);\n};\n"
                     "void Pool::record(int x) {}\n"),
        "lib.cpp": (f"// {S}USES_POOL\nint Pool::take(std::optional<Dtype> dtype,\n"
                    f"               std::optional<Device> device) {{\n"
                    f"  for (auto& [key, block] : map) record(key);\n  return device;\n}}\n"
                    f"// {E}USES_POOL\n"),
    }
    # device is a parameter, key and block are bindings; record is Pool's own member
    assert helpers_of(tmp_path, files, "USES_POOL") == ["record@pool.cpp:5"]

"""Checks that every code listing in the guide is a marked region of real source.

    python tools/check_anchors.py [--root DIR]

Rules, each reported with file and line:
  listing-only      chapters show code only with the listing directive (no literalinclude, no
                    fixed line ranges): a region is found by its name wherever it lives
  listing-name      a listing names a region that exists
  marker-name       marker names are [A-Z0-9_]+
  marker-pair       each name has exactly one START and one END, START first, in one file
  marker-empty      the region between them has code
  marker-nested     no region starts inside another
  marker-prefix     no name is a prefix of another
  marker-braces     a region never splits a declaration: its brackets balance, and a C++
                    template's `template <...>` line is inside the region, not just above it
  marker-unused     every region in the sources is listed by some chapter
  chapter-test      every chapter docs/<name>.md has tests/test_<name>.py (hyphens as
                    underscores; the index page's test is tests/test_quickstart.py)
  example-chapter   every examples/<file>.py belongs to a chapter by name: examples/<name>.py or
                    examples/<name>_<what>.py (quickstart.py belongs to the index page)
  example-test      the chapter's test file runs each of its examples (names the file)
  example-untested  an example script (examples/*.py) a chapter lists or runs is run by some test

What a listing calls is not checked here: the guide links every helper a listing uses to its
definition (docs/_ext/listing.py), and the site's build fails on a link that does not resolve.
A chapter is a top-level docs/*.md page other than the generated ones. Exits 1 if anything is
wrong.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from regions import CodeIndex  # noqa: E402

LISTING_RE = re.compile(r"^\s*(?:```+|:::+)\s*\{listing\}\s*(\S+)")
FORBIDDEN_RE = re.compile(r"^\s*(?:```+|:::+)\s*\{literalinclude\}|^\s*:(?:lines|emphasize-lines):")
RUN_EXAMPLE_RE = re.compile(r"^\s*(?:```+|:::+)\s*\{run-example\}\s*(\S+)")
NOT_CHAPTERS = {"op-coverage", "opinfo-report", "performance"}  # generated while the site builds
ALIASES = {"index": "quickstart"}  # the index page's example and test are the quick start


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


def chapter_key(doc: Path) -> str:
    """The name a chapter's example and test share: docs/random-numbers.md -> random_numbers."""
    return ALIASES.get(doc.stem, doc.stem).replace("-", "_")


def names_file(text: str, filename: str) -> bool:
    """True when `filename` appears whole in `text` (memory.py, not test_memory.py)."""
    return re.search(r"(?<![\w.-])" + re.escape(filename) + r"(?!\w)", text) is not None


def chapter_pages(docs: Path) -> list[Path]:
    return [doc for doc in sorted(docs.glob("*.md")) if doc.stem not in NOT_CHAPTERS]


def check_listings(index: CodeIndex, docs: Path, report: Report) -> dict[Path, list[Path]]:
    """The listing rules; returns the source files each page shows code from."""
    used: set[str] = set()
    shown: dict[Path, list[Path]] = {}
    for doc in chapter_pages(docs):
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            if FORBIDDEN_RE.match(line):
                report.add("listing-only", doc, number,
                           "show code with ```{listing} NAME: a file path or line range drifts "
                           "when the code moves")
            match = LISTING_RE.match(line) or RUN_EXAMPLE_RE.match(line)
            if not match:
                continue
            if line.lstrip("`: ").startswith("{run-example}"):
                shown.setdefault(doc, []).append((doc.parent / match.group(1)).resolve())
                continue
            region = index.regions.get(match.group(1))
            if region is None:
                report.add("listing-name", doc, number, f"no region named {match.group(1)}")
                continue
            used.add(region.name)
            shown.setdefault(doc, []).append(region.path)
    for rule, path, line, message in index.problems:
        report.add(rule, path, line, message)
    for name, region in sorted(index.regions.items()):
        if name not in used:
            report.add("marker-unused", region.path, region.start,
                       f"{name} is not listed by any chapter")
    return shown


# LITERALINCLUDE START: WHERE_CHAPTER_RULES
def check_chapters(root: Path, shown: dict[Path, list[Path]], report: Report) -> None:
    docs, examples, tests = root / "docs", root / "examples", root / "tests"
    chapters = {chapter_key(doc): doc for doc in chapter_pages(docs)}
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

    for doc, paths in sorted(shown.items()):
        for path in sorted(set(paths)):
            if path.suffix != ".py" or path.parent != examples.resolve():
                continue  # files of a project below examples/ are sources, not scripts
            if not any(names_file(text, path.name) for text in test_text.values()):
                report.add("example-untested", doc, 1,
                           f"{path.name} is shown by the chapter but no test runs it")
# LITERALINCLUDE END: WHERE_CHAPTER_RULES


def check(root: Path) -> list[str]:
    root = root.resolve()
    report = Report(root)
    shown = check_listings(CodeIndex(root), root / "docs", report)
    check_chapters(root, shown, report)
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

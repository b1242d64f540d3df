"""Renders the benchmarks' latest results (benchmarks/results/*.json) as Markdown.

    python tools/results.py --output docs/performance.md   # the guide's performance page
    python tools/results.py --readme README.md             # the README's table, in place
    python tools/results.py --check-readme README.md       # exits 1 if that table is stale

Each benchmark in benchmarks/ ends a full run by writing its figures, with the machine, the
torch version, the date and the commit, to benchmarks/results/<benchmark>.json
(benchmarks/record.py). The page has one section per benchmark; the README keeps one table of
headline figures between the lines `<!-- results: start -->` and `<!-- results: end -->`,
each linking to its section. Prose elsewhere keeps the reasons; the figures live here, and
their history in git. No torch needed: the site's build calls `main` before it reads pages.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PAGE = "docs/performance.md"  # where the README's links point, from the repository root
START, END = "<!-- results: start -->", "<!-- results: end -->"

# Sections in reading order: the overview, then each mechanism's benchmark; others after.
ORDER = ["run", "models", "ops", "amp", "compile", "distributed", "sharing", "profiling",
         "autograd_thread", "pace", "phases"]

# The README's table: (benchmark, case, label).
HEADLINES = [
    ("ops", "geomean, 1K", "Operators models call, at 1,024 elements (geometric mean)"),
    ("ops", "geomean, 1M", "The same operators at 1,048,576 elements (geometric mean)"),
    ("run", "add, 64 floats", "A small operator: dispatch and launch"),
    ("run", "matmul 512x512", "matmul 512 × 512"),
    ("models", "geomean, training steps",
     "Training steps of six models people run (geometric mean)"),
    ("amp", "CNN, float32 / CPU float32", "CNN training step, float32"),
    ("amp", "CNN, bf16 / CPU bf16", "CNN training step under autocast, bfloat16"),
    ("compile", "CNN training step: compiled openreg / CPU",
     "CNN training step under torch.compile"),
    ("distributed", "all_reduce 64 MiB, 2 ranks", "all_reduce of 64 MiB on two ranks"),
]

INTRO = """\
Every benchmark in `benchmarks/` times the same work on openreg and on native CPU tensors, in
one run, and reports a **ratio**: openreg's time ÷ the CPU's (lower is better; 1.00 is as
fast as native CPU). The two sides' rounds alternate, so both see the same machine, and a
case's ratio is the **median of the per-round ratios**; its **spread** is the lowest and the
highest of them. Each section names the machine it ran on; on a shared or virtual machine a
single round can be far off, and the spread says how far one run's rounds went. A few figures
are not openreg ÷ CPU; their row names what they divide, or gives a unit. A row marked
"(native)" runs openreg's own kernel for the operator, "(fallback)" the CPU fallback's copies;
both are divided by the same CPU run.

This page is generated from the latest result of each benchmark (`benchmarks/results/*.json`,
written by a full run of the command shown) by `tools/results.py`; their history is in git."""

REQUIRED = {"benchmark": str, "title": str, "what": str, "command": str, "machine": dict,
            "torch": str, "python": str, "date": str, "settings": dict, "cases": list}


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _target_ok(target) -> bool:
    return (target is None or _number(target)
            or (isinstance(target, list) and len(target) == 2
                and all(t is None or _number(t) for t in target) and target != [None, None]))


def problems(result: dict) -> list[str]:
    """What is wrong with one benchmark's result (empty when it is well formed)."""
    found = [f"'{key}' missing or not {kind.__name__}" for key, kind in REQUIRED.items()
             if not isinstance(result.get(key), kind)]
    if "commit" not in result or not isinstance(result["commit"], (str, type(None))):
        found.append("'commit' missing (a string or null)")
    machine = result.get("machine")
    if isinstance(machine, dict) and not {"cpu", "cores", "os"} <= set(machine):
        found.append("'machine' needs cpu, cores and os")
    for i, case in enumerate(result.get("cases") or []):
        where = f"case {i} ({case.get('name', '?')})" if isinstance(case, dict) else f"case {i}"
        if not isinstance(case, dict) or not isinstance(case.get("name"), str):
            found.append(f"{where}: not an object with a name")
            continue
        if _number(case.get("ratio")) == _number(case.get("value")):
            found.append(f"{where}: needs a ratio or a value (one of them)")
        if "value" in case and not isinstance(case.get("unit"), str):
            found.append(f"{where}: a value needs a unit")
        spread = case.get("spread")
        if spread is not None and not (isinstance(spread, list) and len(spread) == 2
                                       and all(_number(s) for s in spread)):
            found.append(f"{where}: spread is [low, high] or null")
        if not isinstance(case.get("rounds"), int) or case["rounds"] < 1:
            found.append(f"{where}: rounds is a positive integer")
        if not _target_ok(case.get("target")):
            found.append(f"{where}: target is null, an upper bound or [low, high]")
    return found


def load(directory: Path = RESULTS) -> dict[str, dict]:
    """The results in `directory`, by benchmark, in the page's order. Raises ValueError for a
    file that is not a well-formed result."""
    results = {}
    for path in sorted(Path(directory).glob("*.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        wrong = problems(result) if isinstance(result, dict) else ["not a JSON object"]
        if wrong:
            raise ValueError(f"{path}: " + "; ".join(wrong))
        results[result["benchmark"]] = result
    rank = {name: i for i, name in enumerate(ORDER)}
    return dict(sorted(results.items(), key=lambda item: (rank.get(item[0], len(ORDER)),
                                                           item[0])))


def slug(title: str) -> str:
    """The anchor of a heading, as GitHub and MyST (myst_heading_anchors) make it."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def _escape(text: str) -> str:
    return re.sub(r"([\\`*_|<>\[\]])", r"\\\1", text)


def _figure(x: float) -> str:
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def result_text(case: dict) -> str:
    if "ratio" in case:
        return f"{case['ratio']:.2f}"
    return f"{_figure(case['value'])} {case['unit']}"


def spread_text(case: dict) -> str:
    spread = case.get("spread")
    if not spread:
        return "–"
    show = (lambda x: f"{x:.2f}") if "ratio" in case else _figure
    return f"{show(spread[0])}–{show(spread[1])}"


def target_text(target) -> str:
    if target is None:
        return ""
    if _number(target):
        return f"≤ {target:.2f}"
    low, high = target
    if high is None:
        return f"≥ {low:.2f}"
    if low is None:
        return f"≤ {high:.2f}"
    return f"{low:.2f}–{high:.2f}"


def _date(iso: str) -> str:
    try:
        when = datetime.datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if when.tzinfo is not None:
        return when.astimezone(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return when.strftime("%Y-%m-%d %H:%M")


def section(result: dict) -> str:
    """One benchmark's section of the page."""
    machine = result["machine"]
    settings = ", ".join(f"{key} {value}" for key, value in result["settings"].items())
    commit = f"commit `{result['commit']}`" if result.get("commit") else "commit unknown"
    notes = any(case.get("note") for case in result["cases"])
    lines = [f"## {result['title']}", "", f"`{result['command']}`", "", result["what"], "",
             f"Run on {machine['cpu']}, {machine['cores']} cores, {machine['os']}; torch "
             f"{result['torch']}, Python {result['python']}; {_date(result['date'])}; {commit}."
             + (f" Settings: {settings}." if settings else ""), "",
             "| case | result | spread | rounds | target |" + (" note |" if notes else ""),
             "| --- | ---: | ---: | ---: | --- |" + (" --- |" if notes else "")]
    for case in result["cases"]:
        cells = [_escape(case["name"]), result_text(case), spread_text(case), str(case["rounds"]),
                 target_text(case.get("target"))]
        lines.append(_row(cells + [_escape(case.get("note") or "")] if notes else cells))
    return "\n".join(lines) + "\n"


def page(results: dict[str, dict]) -> str:
    """The whole performance page."""
    parts = ["# Performance", "", INTRO, ""]
    if not results:
        parts += ["No benchmark has written a result yet.", ""]
    return "\n".join(parts) + "".join("\n" + section(r) for r in results.values())


def _case(results: dict[str, dict], benchmark: str, name: str) -> dict | None:
    if benchmark not in results:
        return None  # not run yet: no row
    for case in results[benchmark]["cases"]:
        if case["name"] == name:
            return case
    raise ValueError(f"benchmarks/results/{benchmark}.json has no case '{name}' "
                     "(tools/results.py, HEADLINES)")


def readme_block(results: dict[str, dict], page_path: str = PAGE,
                 headlines: list[tuple[str, str, str]] = HEADLINES) -> str:
    """The README's table of headline figures, markers included."""
    lines = [START, "| figure | openreg ÷ CPU | spread | target |", "| --- | ---: | ---: | --- |"]
    for benchmark, name, label in headlines:
        case = _case(results, benchmark, name)
        if case is None:
            continue
        # The kernels' threads, when the run gave them other than the machine's cores (the
        # backend's default on a machine whose PyTorch uses every core).
        threads = results[benchmark]["settings"].get("kernel_threads")
        if isinstance(threads, int) and threads != results[benchmark]["machine"].get("cores"):
            label += f" (kernels on {threads} thread{'s' if threads > 1 else ''})"
        link = f"benchmarks/results/{benchmark}.json"  # the page is built, the data is in git
        lines.append(_row([f"[{_escape(label)}]({link})", result_text(case), spread_text(case),
                           target_text(case.get("target"))]))
    lines += ["", "Generated from the latest results in `benchmarks/results/` by "
              "`tools/results.py`; the guide's Performance page (`docs/performance.md`, written "
              "when the site builds) shows every case, the machine, the date and the commit.", END]
    return "\n".join(lines)


def replace_block(text: str, block: str) -> str:
    """`text` with its lines from START to END replaced by `block`. Raises ValueError when
    the markers are missing or out of order."""
    lines = text.split("\n")
    try:
        start, end = lines.index(START), lines.index(END)
    except ValueError:
        raise ValueError(f"the lines {START} and {END} must both be present") from None
    if end < start:
        raise ValueError(f"{END} comes before {START}")
    return "\n".join(lines[:start] + block.split("\n") + lines[end + 1:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(RESULTS), metavar="DIR",
                        help="where the results are (default benchmarks/results)")
    parser.add_argument("--output", metavar="FILE", help="write the page here (default stdout)")
    parser.add_argument("--readme", metavar="FILE", help="replace the README's table in FILE")
    parser.add_argument("--check-readme", metavar="FILE",
                        help="exit 1 if FILE's table is not what --readme would write")
    parser.add_argument("--page", default=PAGE, help=f"the page's path in links (default {PAGE})")
    args = parser.parse_args(argv)
    try:
        results = load(Path(args.results))
        block = readme_block(results, args.page) if args.readme or args.check_readme else ""
        if args.readme:
            path = Path(args.readme)
            text = path.read_text(encoding="utf-8")
            if replace_block(text, block) != text:
                path.write_text(replace_block(text, block), encoding="utf-8")
        if args.check_readme:
            text = Path(args.check_readme).read_text(encoding="utf-8")
            if replace_block(text, block) != text:
                print(f"{args.check_readme}: its results table is not the latest results' (run "
                      f"python tools/results.py --readme {args.check_readme})", file=sys.stderr)
                return 1
    except ValueError as error:
        print(f"tools/results.py: {error}", file=sys.stderr)
        return 1
    if args.output:
        Path(args.output).write_text(page(results), encoding="utf-8")
    elif not (args.readme or args.check_readme):
        sys.stdout.write(page(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

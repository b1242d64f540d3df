"""Records a benchmark's full run as data: benchmarks/results/<benchmark>.json.

Every benchmark ends by calling `write`; tools/results.py turns the latest files into the
guide's performance page and the README's table. A figure is either a ratio (openreg ÷ the
reference, the median of per-round ratios; lower is better) or a value with a unit. Its spread
is the lowest and highest per-round figure, so a reader sees how much one run can be trusted.
Quick runs and runs of a subset (a `-k` filter, one size) write nothing: they are checks, and
would replace a whole run's figures with a part.

    {"benchmark": "ops", "title": ..., "what": ..., "command": "python benchmarks/ops.py",
     "machine": {"cpu": ..., "cores": 2, "os": ...}, "torch": ..., "python": ...,
     "date": "2026-11-28T02:30:00+00:00", "commit": "f37b806" or null,
     "settings": {...}, "cases": [{"name": ..., "ratio": 0.93, "spread": [0.88, 1.02],
     "rounds": 9, "target": 1.1}, {"name": ..., "value": 18.2, "unit": "µs", ...}]}

A target is null, an upper bound, or [low, high] where either may be null.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"

Target = float | list | None


def add_results_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", metavar="DIR", default=str(RESULTS),
                        help="where a full run writes <benchmark>.json "
                             "(default benchmarks/results)")


def _round(x: float, digits: int = 4) -> float:
    return float(f"{x:.{digits}g}")


def ratio_case(name: str, ratios: list[float], target: Target = None, note: str | None = None,
               spread: bool = True) -> dict:
    """A ratio: the median of `ratios`, one per round. `spread=False` where the rounds are not
    paired (the sides ran one after another), so their extremes say little."""
    case = {"name": name, "ratio": _round(statistics.median(ratios)),
            "spread": [_round(min(ratios)), _round(max(ratios))] if spread else None,
            "rounds": len(ratios), "target": target}
    return {**case, "note": note} if note else case


def value_case(name: str, values: list[float], unit: str, target: Target = None,
               note: str | None = None) -> dict:
    """A figure that is not a ratio (µs a call, a count): the median of `values` in `unit`."""
    case = {"name": name, "value": _round(statistics.median(values)), "unit": unit,
            "spread": [_round(min(values)), _round(max(values))], "rounds": len(values),
            "target": target}
    return {**case, "note": note} if note else case


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "os": f"{platform.system()} {platform.release()}"}


def commit() -> str | None:
    """The short hash of HEAD, with "-dirty" when tracked code (results aside) differs from it."""
    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              check=False)
    try:
        head = git("rev-parse", "--short", "HEAD")
        if head.returncode:
            return None
        dirty = git("diff", "--quiet", "HEAD", "--", ".", ":(exclude)benchmarks/results").returncode
    except OSError:
        return None
    return head.stdout.strip() + ("-dirty" if dirty else "")


def command(benchmark: str, argv: list[str] | None) -> str:
    """The command line of this run, from the repository root, without --results."""
    kept, skip = [], False
    for arg in sys.argv[1:] if argv is None else argv:
        if skip:
            skip = False
        elif arg == "--results":
            skip = True
        elif not arg.startswith("--results="):
            kept.append(arg)
    return " ".join(["python", f"benchmarks/{benchmark}.py", *kept])


def dumps(result: dict) -> str:
    """The file's text: one case a line, so that git's diff of two runs reads case by case."""
    head = json.dumps({k: v for k, v in result.items() if k != "cases"}, indent=1,
                      ensure_ascii=False)
    cases = ",\n  ".join(json.dumps(case, ensure_ascii=False) for case in result["cases"])
    return head[:-2] + ',\n "cases": [\n  ' + cases + "\n ]\n}\n"


def write(benchmark: str, title: str, what: str, settings: dict, cases: list[dict],
          directory: str, argv: list[str] | None = None) -> Path:
    """Writes <directory>/<benchmark>.json and says where on stderr (stdout stays the table)."""
    import torch

    result = {
        "benchmark": benchmark, "title": title, "what": what, "command": command(benchmark, argv),
        "machine": machine(), "torch": torch.__version__, "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit(), "settings": settings, "cases": cases,
    }
    path = Path(directory) / f"{benchmark}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(result), encoding="utf-8")
    print(f"results: {path}", file=sys.stderr)
    return path


def geomean_case(name: str, ratios: list[float], per_pass: list[list[float]],
                 target: Target = None) -> dict:
    """The geometric mean of `ratios` (one per operator); its spread and rounds are those of
    the geometric means of each pass (`per_pass`: per operator, the median of each pass)."""
    def geomean(values) -> float:
        values = list(values)
        return math.exp(sum(math.log(v) for v in values) / len(values))
    case = ratio_case(name, [geomean(op[p] for op in per_pass) for p in range(len(per_pass[0]))],
                      target)
    return {**case, "ratio": _round(geomean(ratios))}

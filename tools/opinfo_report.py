"""Writes the guide's OpInfo pass-rate page from the committed sweep report.

    python tools/opinfo_report.py [--report docs/opinfo/report.json]
                                  [--output docs/opinfo-report.md]

The docs build calls main() (docs/conf.py): the page shows what the last
`python scripts/opinfo_sweep.py` measured, without rerunning the sweep.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = {"pass": "✓", "xpass": "✓", "fail": "✗", "error": "E", "crash": "☠", "timeout": "T",
        "xfail": "x", "skip": "·"}


def render(report: dict) -> str:
    columns = [("forward", d) for d in report["dtypes"]]
    columns += [("backward", d) for d in ("float32", "float64")
                if "backward" in report["directions"]]
    lines = [
        "# OpInfo pass rates",
        "",
        "Generated while this site was built, from `docs/opinfo/report.json`, which",
        f"`python scripts/opinfo_sweep.py` wrote (torch {report['torch']}, "
        f"{report['ops']} OpInfos,",
        f"at most {report['max_samples']} samples per op and dtype, {report['seconds']} s). The",
        "[testing chapter](testing.md) explains the harness and the expected-failure table.",
        "",
        "## Summary",
        "",
        "An operator passes for a dtype when every sample matched the CPU (random operators: the",
        "same distribution). Operators that do not support a dtype are not counted.",
        "",
        "| direction | dtype | ops | pass rate | fail | error | crash | timeout "
        "| expected failures |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for direction, dtype in columns:
        s = report["summary"].get(f"{direction}/{dtype}")
        if not s:
            continue
        lines.append(f"| {direction} | {dtype} | {s['ops']} | {s['pass_rate']} % | {s['fail']} | "
                     f"{s['error']} | {s['crash']} | {s['timeout']} | {s['xfail']} |")
    lines += ["", "## Per operator", "",
              "✓ matches the CPU, x expected failure (see the table in the chapter), ✗ mismatch,",
              "E error, ☠ crash, T timeout, · no sample ran, blank: dtype not supported.", ""]
    header = "| op | " + " | ".join(f"{d}" + (" ∇" if direction == "backward" else "")
                                      for direction, d in columns) + " |"
    lines += [header, "|---|" + "---|" * len(columns)]
    cells = defaultdict(dict)
    for r in report["results"]:
        cells[r["op"]][(r["direction"], r["dtype"])] = r["status"]
    for op in sorted(cells):
        row = [MARK.get(cells[op].get(c, ""), "") for c in columns]
        lines.append(f"| `{op}` | " + " | ".join(row) + " |")
    failing = [r for r in report["results"] if r["status"] in ("fail", "error", "crash", "timeout")]
    if failing:
        lines += ["", "## Unexpected failures", "", "| op | dtype | direction | status | detail |",
                  "|---|---|---|---|---|"]
        for r in failing:
            detail = r["detail"].replace("|", "\\|").replace("\n", " ")[:200]
            lines.append(f"| `{r['op']}` | {r['dtype']} | {r['direction']} | {r['status']} | "
                         f"{detail} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--report", default=str(ROOT / "docs" / "opinfo" / "report.json"))
    parser.add_argument("--output", default=str(ROOT / "docs" / "opinfo-report.md"))
    args = parser.parse_args(argv)
    report = json.loads(Path(args.report).read_text())
    Path(args.output).write_text(render(report))


if __name__ == "__main__":
    main()

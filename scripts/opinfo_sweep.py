"""Sweeps PyTorch's whole OpInfo database on openreg against the CPU and writes a report.

    python scripts/opinfo_sweep.py                      # every op, every dtype, both directions
    python scripts/opinfo_sweep.py --dtypes float32 --ops add,fft.hfft

Each operator runs in a worker process: a crash (a signal) or a hang kills
only the worker, is recorded as "crash" or "timeout" for that operator, and a
new worker continues with the next one. Writes docs/opinfo/report.json (the
committed report the guide's pass-rate page is generated from) unless --out
says otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "int64", "int32", "uint8",
          "bool"]
BACKWARD_DTYPES = ["float32", "float64"]


def worker(ops: list[str], dtypes: list[str], directions: list[str], max_samples: int) -> None:
    """Runs the checks, one JSON line per result on stdout (flushed: a crash loses nothing)."""
    import warnings

    import torch
    import torch_openreg  # noqa: F401
    from torch.testing._internal.common_methods_invocations import op_db

    from torch_openreg.openreg.testing.compare import check_op, op_key
    from torch_openreg.openreg.testing.expected_failures import expected_failure

    warnings.simplefilter("ignore")
    by_key = {op_key(op): op for op in op_db}
    for key in ops:
        op = by_key[key]
        for direction in directions:
            wanted = (dtypes if direction == "forward"
                      else [d for d in dtypes if d in BACKWARD_DTYPES])
            supported = (op.supported_dtypes("openreg") if direction == "forward"
                         else op.supported_backward_dtypes("openreg"))
            for name in wanted:
                dtype = getattr(torch, name)
                if dtype not in supported:
                    continue
                print(json.dumps({"start": [key, name, direction]}), flush=True)
                started = time.perf_counter()
                try:
                    outcome = check_op(op, dtype, backward=direction == "backward",
                                       max_samples=max_samples)
                    status, detail, samples = outcome.status, outcome.detail, outcome.samples
                except Exception as exc:  # the harness itself failed on this op
                    status, detail, samples = (
                        "error", f"harness: {type(exc).__name__}: {exc}"[:300], 0)
                reason = expected_failure(key, name, direction)
                if reason is not None:
                    status = {"pass": "xpass"}.get(status, "xfail" if status != "skip" else status)
                    detail = f"{detail} [expected: {reason}]" if status == "xfail" else detail
                try:
                    torch.openreg.synchronize()
                except Exception as exc:  # an asynchronous kernel failure surfaces here
                    status, detail = "error", f"at synchronize: {exc}"[:300]
                print(json.dumps({"op": key, "dtype": name, "direction": direction,
                                  "status": status, "samples": samples, "detail": detail,
                                  "seconds": round(time.perf_counter() - started, 3)}), flush=True)


def run_chunk(ops, dtypes, directions, max_samples, timeout, results, log) -> list[str]:
    """Runs ops in one worker until it finishes or dies; returns the ops not yet done."""
    cmd = [sys.executable, __file__, "--worker", "--ops", ",".join(ops), "--dtypes",
           ",".join(dtypes), "--directions", ",".join(directions), "--max-samples",
           str(max_samples)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=env, cwd=ROOT)
    current = None
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    last = time.monotonic()
    while True:
        if not sel.select(timeout=5):
            if current is not None and time.monotonic() - last > timeout:
                proc.kill()
                proc.wait()
                results.append({"op": current[0], "dtype": current[1], "direction": current[2],
                                "status": "timeout", "samples": 0,
                                "detail": f"no result after {timeout} s"})
                log(results[-1])
                break
            continue
        line = proc.stdout.readline()
        if not line:
            code = proc.wait()
            if code != 0 and current is not None:
                results.append({"op": current[0], "dtype": current[1], "direction": current[2],
                                "status": "crash", "samples": 0,
                                "detail": f"the process died with exit code {code}"})
                log(results[-1])
            elif code != 0 and not results:
                raise RuntimeError(f"worker failed before its first op (exit code {code})")
            break
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        last = time.monotonic()
        if "start" in record:
            current = record["start"]
            continue
        results.append(record)
        log(record)
        current = None
    # Ops after the one that died still have to run (the dead op's other dtypes are skipped).
    if current is None:
        return []
    last_op = current[0] if current else None
    remaining = ops[ops.index(last_op) + 1:] if last_op in ops else []
    return remaining


def summarize(results: list[dict]) -> dict:
    """Pass rates per (dtype, direction): an op passes when none of its checks failed."""
    summary = {}
    for r in results:
        key = f"{r['direction']}/{r['dtype']}"
        s = summary.setdefault(key, {"ops": 0, "pass": 0, "xfail": 0, "fail": 0, "error": 0,
                                     "crash": 0, "timeout": 0, "skip": 0, "xpass": 0})
        s[r["status"]] = s.get(r["status"], 0) + 1
        if r["status"] != "skip":
            s["ops"] += 1
    for s in summary.values():
        ran = s["ops"]
        s["pass_rate"] = round(100.0 * (s["pass"] + s["xpass"]) / ran, 2) if ran else None
    return summary


def dump(report: dict) -> str:
    """The report as JSON with one result per line (a reviewable diff when it changes)."""
    head = {k: v for k, v in report.items() if k != "results"}
    text = json.dumps(head, indent=1)[:-2]
    rows = ",\n  ".join(json.dumps(r) for r in report["results"])
    return f"{text},\n \"results\": [\n  {rows}\n ]\n}}\n"


def write_report(args, ops, dtypes, directions, results, started) -> dict:
    """Writes the report so far (a sweep stopped early leaves the ops it finished)."""
    import torch

    report = {"torch": torch.__version__, "ops": len(ops), "dtypes": dtypes,
              "directions": directions, "max_samples": args.max_samples,
              "seconds": round(time.time() - started), "summary": summarize(results),
              "results": sorted(results, key=lambda r: (r["op"], r["direction"], r["dtype"]))}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(dump(report))
    return report


def reclassify(path: Path) -> None:
    """Marks failures listed in the table as xfail (and listed passes as xpass), in place."""
    from torch_openreg.openreg.testing.expected_failures import expected_failure

    report = json.loads(path.read_text())
    for r in report["results"]:
        reason = expected_failure(r["op"], r["dtype"], r["direction"])
        if reason is None or r["status"] in ("skip", "xfail", "xpass"):
            continue
        if r["status"] == "pass":
            r["status"] = "xpass"
        else:
            r["status"] = "xfail"
            r["detail"] = f"{r['detail']} [expected: {reason}]"
    report["summary"] = summarize(report["results"])
    path.write_text(dump(report))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--ops", default="", help="comma-separated OpInfo names (default: all)")
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    parser.add_argument("--directions", default="forward,backward")
    parser.add_argument("--max-samples", type=int, default=12,
                        help="samples per op and dtype (OpInfo generates up to hundreds)")
    parser.add_argument("--timeout", type=int, default=180, help="seconds per op and dtype")
    parser.add_argument("--chunk", type=int, default=40, help="ops per worker process")
    parser.add_argument("--out", default=str(ROOT / "docs" / "opinfo" / "report.json"))
    parser.add_argument("--reclassify", action="store_true",
                        help="reapply the expected-failure table to the report at --out, "
                             "without rerunning anything")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    dtypes = [d for d in args.dtypes.split(",") if d]
    directions = [d for d in args.directions.split(",") if d]
    if args.worker:
        worker(args.ops.split(","), dtypes, directions, args.max_samples)
        return
    if args.reclassify:
        reclassify(Path(args.out))
        return

    if args.ops:
        ops = args.ops.split(",")
    else:
        out = subprocess.run(
            [sys.executable, "-c", "from torch.testing._internal.common_methods_invocations "
             "import op_db\nfrom torch_openreg.openreg.testing.compare import op_key\n"
             "print('\\n'.join(sorted({op_key(o) for o in op_db})))"],
            capture_output=True, text=True, check=True, cwd=ROOT)
        ops = out.stdout.split()
    results: list[dict] = []
    started = time.time()

    def log(r):
        if r["status"] not in ("pass", "skip"):
            print(f"{r['status']:8} {r['op']} {r['dtype']} {r['direction']}: {r['detail'][:160]}",
                  flush=True)

    pending = list(ops)
    while pending:
        chunk, pending = pending[: args.chunk], pending[args.chunk:]
        while chunk:
            chunk = run_chunk(chunk, dtypes, directions, args.max_samples, args.timeout,
                              results, log)
        print(f"... {len(ops) - len(pending)}/{len(ops)} ops, {time.time() - started:.0f} s",
              flush=True)
        report = write_report(args, ops[: len(ops) - len(pending)], dtypes, directions, results,
                              started)
    for key, s in sorted(report["summary"].items()):
        print(f"{key:20} {s['pass_rate']}% of {s['ops']} ops  (fail {s['fail']}, error "
              f"{s['error']}, crash {s['crash']}, timeout {s['timeout']}, xfail {s['xfail']})")
    print(f"wrote {args.out} in {report['seconds']} s")


if __name__ == "__main__":
    main()

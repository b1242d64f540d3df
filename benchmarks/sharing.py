"""Benchmark: passing a tensor to another process and back an answer, CPU against openreg.

    python benchmarks/sharing.py            # 1 MiB tensors, 7 rounds
    python benchmarks/sharing.py --quick    # a few iterations, to check it works

Each call puts a fresh tensor on a torch.multiprocessing queue; a spawned child
takes it, reads one element and answers. CPU tensors travel by the
file_descriptor strategy (shared memory), openreg tensors by the device-memory
handle of docs/sharing-tensors.md. Rounds alternate; the ratio is the median of
the per-round ratios (openreg / CPU). A full run (not --quick) writes
benchmarks/results/sharing.json (benchmarks/record.py).
"""

import argparse
import os
import statistics
import sys

import torch
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record import add_results_option, ratio_case, write  # noqa: E402
from run import alternate, report  # noqa: E402


def echo(inbox, outbox):
    while (t := inbox.get(timeout=120)) is not None:
        outbox.put(t[0].item())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    add_results_option(parser)
    args = parser.parse_args(argv)
    iterations, rounds = (5, 2) if args.quick else (50, 7)
    ctx = mp.get_context("spawn")
    inbox, outbox = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=echo, args=(inbox, outbox), daemon=True)
    child.start()
    try:
        def send(device):
            def call():
                inbox.put(torch.ones(1 << 18, device=device))
                assert outbox.get(timeout=120) == 1.0
            return call

        cpu, device, ratios = alternate(send("cpu"), send("openreg"), iterations, rounds)
        case = ratio_case("send 1 MiB, get an answer", ratios)
        print(f"{'case':28} {'cpu':>12} {'openreg':>12} {'ratio':>7} {'target':>9}")
        report(case["name"], statistics.median(cpu), statistics.median(device), case["ratio"], "-")
        inbox.put(None)
        child.join(60)
    finally:
        if child.is_alive():
            child.kill()
    if not args.quick:
        write("sharing", "Sharing tensors between processes",
              "A fresh 1 MiB tensor put on a torch.multiprocessing queue to a spawned child that "
              "answers, openreg's device-memory handle against the CPU's shared memory.",
              {"iterations": iterations, "rounds": rounds}, [case], args.results, argv)


if __name__ == "__main__":
    main()

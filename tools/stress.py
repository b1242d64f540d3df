"""Stress: many threads on many streams and devices, every result checked against the CPU.

    python tools/stress.py --seconds 600          # the long run
    python tools/stress.py --seconds 12           # what the test suite runs

Each thread loops until the deadline over a random mix of work: host-to-device copies
(pageable and pinned, blocking and not), kernels, device-to-device copies across devices,
events recorded on one stream and waited on by another, and device-to-host copies that
verify the result. At the end the device memory in use must be back where it started.
"""

from __future__ import annotations

import argparse
import random
import threading
import time

import torch


def worker(seed: int, deadline: float, streams: dict, counts: list, errors: list) -> None:
    rng = random.Random(seed)
    devices = sorted(streams)
    done = 0
    try:
        while time.monotonic() < deadline:
            d = rng.choice(devices)
            s1, s2 = rng.sample(streams[d], 2)
            n = rng.choice([1, 7, 64, 1000, 1 << 14])
            host = torch.randn(n, generator=torch.Generator().manual_seed(rng.getrandbits(31)))
            if rng.random() < 0.3:
                host = host.pin_memory()
            kind = rng.randrange(5)
            with torch.openreg.device(d), torch.openreg.stream(s1):
                x = host.to(f"openreg:{d}", non_blocking=host.is_pinned())
                if kind == 0:  # elementwise chain
                    got, want = (x * 2 + 1).sin(), (host * 2 + 1).sin()
                elif kind == 1:  # a reduction
                    got, want = x.abs().sum(), host.abs().sum()
                elif kind == 2:  # matmul on a square view
                    m = int(n ** 0.5)
                    a, b = x[: m * m].view(m, m), host[: m * m].view(m, m)
                    got, want = a @ a, b @ b
                elif kind == 3:  # produced on s1, consumed on s2 after an event
                    y = x * 3
                    event = torch.openreg.Event()
                    event.record(s1)
                    with torch.openreg.stream(s2):
                        s2.wait_event(event)
                        got = y - 1
                        y.record_stream(s2)
                    s1.wait_stream(s2)  # the check below copies `got` back on s1
                    want = host * 3 - 1
                else:  # across devices
                    other = devices[(devices.index(d) + 1) % len(devices)]
                    got, want = x.to(f"openreg:{other}") + 5, host + 5
                # Copied back on s1, the stream that produced `got` (as on CUDA, a copy on
                # another stream would not wait for it).
                got = got.cpu()
            if not torch.allclose(got, want, rtol=1e-4, atol=1e-4):
                errors.append(f"thread {seed}: kind {kind}, n {n}: result differs from the CPU")
            done += 1
    except Exception as e:  # report, do not hang the other threads
        errors.append(f"thread {seed}: {type(e).__name__}: {e}")
    counts[seed] = done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--devices", type=int, default=2)
    args = parser.parse_args()
    devices = list(range(min(args.devices, torch.openreg.device_count())))
    streams = {d: [torch.openreg.Stream(device=d) for _ in range(args.streams)] for d in devices}
    baseline = [torch.openreg.memory_allocated(d) for d in devices]
    counts, errors = [0] * args.threads, []
    deadline = time.monotonic() + args.seconds
    threads = [threading.Thread(target=worker, args=(i, deadline, streams, counts, errors))
               for i in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=args.seconds + 120)
    hung = sum(t.is_alive() for t in threads)
    for d in devices:
        torch.openreg.synchronize(d)
    after = [torch.openreg.memory_allocated(d) for d in devices]
    print(f"{args.threads} threads x {args.streams} streams x {len(devices)} devices for "
          f"{args.seconds:g} s: {sum(counts)} operations verified against the CPU")
    print(f"mismatches or errors: {len(errors)}; threads still running: {hung}")
    for e in errors[:10]:
        print("  ", e)
    print(f"device memory in use: before {baseline}, after {after}: "
          f"{'back to baseline' if after == baseline else 'LEAKED'}")
    return 0 if not errors and not hung and after == baseline else 1


if __name__ == "__main__":
    raise SystemExit(main())

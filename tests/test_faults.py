"""Fault injection (torch.openreg.faults): each injected failure surfaces as a Python exception
at the right place, the process keeps working, and no device memory is lost."""


from conftest import run_python

PRELUDE = """
import torch
F = torch.openreg.faults
def stats():
    torch.openreg.synchronize()
    s = torch.openreg.memory_stats()
    return s.get("allocated_bytes.all.current", 0), s.get("active_bytes.all.current", 0)
x = torch.arange(16., device="openreg")
base = stats()
"""


def check(body: str, env: dict | None = None) -> str:
    result = run_python(PRELUDE + body, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_failed_kernel_launch_raises_at_the_next_synchronization():
    out = check("""
F.inject("launch", nth=1)
y = x * 2                       # queued: the launch returns, the fault is on the stream
print("queued without error")
try:
    torch.openreg.synchronize()
except RuntimeError as e:
    print("raised at synchronize:", "injected fault: a kernel launch failed" in str(e))
del y
print("works afterwards:", torch.equal((x + 1).cpu(), torch.arange(16.) + 1))
print("memory back to baseline:", stats() == base)
""")
    assert "queued without error" in out
    assert "raised at synchronize: True" in out
    assert "works afterwards: True" in out and "memory back to baseline: True" in out


def test_failed_copy_raises_at_the_call_that_waits_for_it():
    out = check("""
F.inject("copy", nth=1)
try:
    x.cpu()                     # a device-to-host copy waits for itself
except RuntimeError as e:
    print("raised at the copy:", "injected fault: a copy failed" in str(e))
print("works afterwards:", torch.equal(x.cpu(), torch.arange(16.)))
print("memory back to baseline:", stats() == base)
""")
    assert "raised at the copy: True" in out
    assert "works afterwards: True" in out and "memory back to baseline: True" in out


def test_failed_allocation_is_out_of_memory_and_recovers():
    out = check("""
torch.openreg.empty_cache()
F.inject("alloc", nth=1)        # one refusal: the allocator empties its cache and retries
a = torch.empty(1 << 20, device="openreg")
print("one refusal survived by the retry:", a.numel() == 1 << 20)
del a
torch.openreg.empty_cache()
F.inject("alloc", nth=1, times=2)
try:
    torch.empty(1 << 20, device="openreg")
except torch.OutOfMemoryError as e:
    print("two refusals: OutOfMemoryError:", str(e).startswith("OpenReg out of memory"))
print("works afterwards:", torch.ones(1 << 20, device="openreg").sum().item() == 1 << 20)
print("memory back to baseline:", stats() == base)
""")
    assert "one refusal survived by the retry: True" in out
    assert "two refusals: OutOfMemoryError: True" in out
    assert "works afterwards: True" in out and "memory back to baseline: True" in out


def test_the_environment_arms_a_fault_at_start():
    result = run_python("""
import torch
x = torch.ones(16, device="openreg")   # fill_, a hand-written kernel: the first launch
try:
    torch.openreg.synchronize()
    print("no error")
except RuntimeError as e:
    print("raised:", "kernel launch failed" in str(e))
y = torch.arange(16., device="openreg")   # x holds whatever the failed kernel left
print("works afterwards:", (y * 3).sum().item() == 360.0)
""", env={"OPENREG_FAULT_LAUNCH": "1"})
    assert result.returncode == 0, result.stderr
    assert "raised: True" in result.stdout and "works afterwards: True" in result.stdout


def test_a_delayed_stream_is_only_slower():
    out = check("""
import time
s = torch.openreg.Stream()
with F.stream_delay(20000):     # 20 ms before every task on every stream
    with torch.openreg.stream(s):
        t0 = time.perf_counter()
        y = x * 2
        queued = time.perf_counter() - t0
    s.synchronize()
    waited = time.perf_counter() - t0
print("launch returned at once:", queued < 0.015, "| synchronize waited:", waited >= 0.02)
print("result right:", torch.equal(y.cpu(), torch.arange(16.) * 2))
""")
    assert "launch returned at once: True | synchronize waited: True" in out
    assert "result right: True" in out


def test_bad_arguments_are_clear_errors():
    out = check("""
for call in (lambda: F.inject("disk"), lambda: F.inject("copy", nth=-1),
             lambda: F.inject("copy", times=0), lambda: F.stream_delay(-5).__enter__()):
    try:
        call()
    except ValueError as e:
        print("ValueError:", e)
""")
    assert "unknown fault kind 'disk'" in out
    assert "nth must be a non-negative int, got -1" in out
    assert "times must be a positive int, got 0" in out
    assert "microseconds must be a non-negative int, got -5" in out

"""The launch path: kernels are queued on the stream and run by its worker, and the device's
kernel threads (docs/launching.md)."""

import os

import pytest
import torch
from conftest import run_example, run_python


def test_kernels_are_queued_not_run_inline():
    """The launch returns before the device runs the kernel; .cpu() waits for it."""
    x = torch.ones(1 << 22, device="openreg")
    for _ in range(20):
        x = x + 1
    assert x[-1].item() == 21.0


def test_kernel_threads_example():
    """examples/launching.py: the kernels get PyTorch's thread count; the knob takes them back."""
    lines = run_example("launching.py").splitlines()
    kernels, _, pytorch = lines[0].removeprefix("kernel threads: ").partition(
        " = torch.get_num_threads(): ")
    assert kernels == pytorch and int(kernels) >= 1
    assert lines[1:] == ["mean |x|: 0.8", "kernel threads: 1"]


def test_kernel_threads_default_to_pytorchs_thread_count():
    """Kernels get as many threads as PyTorch's own CPU loops when the backend loads: the
    machine's cores by default, what OMP_NUM_THREADS says when it is set."""
    probe = "import torch; print(torch.openreg.get_kernel_threads(), torch.get_num_threads())"
    default = run_python(probe)
    assert default.returncode == 0, default.stderr
    kernels, pytorch = default.stdout.split()
    assert kernels == pytorch and 1 <= int(kernels) <= os.cpu_count()
    one = run_python(probe, env={"OMP_NUM_THREADS": "1"})
    assert one.stdout.split() == ["1", "1"]


def test_kernel_threads_must_be_between_one_and_the_cores():
    default = torch.openreg.get_kernel_threads()
    for bad in (0, -2):
        with pytest.raises(ValueError, match=f"at least one thread, got {bad}"):
            torch.openreg.set_kernel_threads(bad)
    cores = os.cpu_count()
    with pytest.raises(ValueError,
                       match=f"at most {cores} threads .this machine's cores., got 1000"):
        torch.openreg.set_kernel_threads(1000)
    assert torch.openreg.get_kernel_threads() == default  # refused values change nothing


KERNEL_THREADS_PROBE = """
import os, torch
def threads(): return len(os.listdir("/proc/self/task"))
torch.openreg.set_kernel_threads(1)
torch.set_num_threads(2)  # what PyTorch sets on a thread's first parallel loop: must not win
x = torch.randn(1 << 20)
x.exp().sum()  # the host's own OpenMP threads start now, before counting
d = x.to("openreg"); torch.openreg.synchronize()
before = threads()
one = d.exp().sum().item()
after_one = threads()
torch.openreg.set_kernel_threads(2)
two = d.exp().sum().item()
print(torch.openreg.get_kernel_threads(), after_one - before, threads() - after_one,
      abs(one - two) <= 1e-3 * abs(one), abs(one - x.exp().sum().item()) <= 1e-3 * abs(one))
"""


def test_kernel_threads_decide_the_devices_openmp_threads():
    """With one kernel thread the device's worker starts no OpenMP thread beside
    the host's, even when torch.set_num_threads asked for more; with two it starts one. Both
    give the CPU's sums."""
    result = run_python(KERNEL_THREADS_PROBE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2", "0", "1", "True", "True"]


IDLE_RELEASE_PROBE = """
import os, time, torch
def threads(): return len(os.listdir("/proc/self/task"))
torch.openreg.set_kernel_threads(2)
x = torch.randn(1 << 20, device="openreg")
def most_threads_while_busy():
    ys = [x.exp() for _ in range(40)]  # large kernels, queued: the device works for a while
    seen = threads()
    while not torch.openreg.current_stream().query():
        seen = max(seen, threads())
    return seen, sum(y.sum().item() for y in ys)
torch.openreg.synchronize()
time.sleep(0.2)  # the worker has had no work for far longer than a millisecond
idle = threads()
busy, first = most_threads_while_busy()
time.sleep(0.2)
idle_again = threads()
busy_again, second = most_threads_while_busy()
print(busy - idle, idle_again - idle, busy_again - idle, first == second)
"""


def test_an_idle_worker_gives_its_threads_back():
    """A large kernel starts the worker's OpenMP thread; once the device has had no work for a
    millisecond the worker ends it (the driver's idle callback), so the host's own parallel loops
    keep the cores to themselves; the next large kernel starts it again."""
    result = run_python(IDLE_RELEASE_PROBE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "0", "1", "True"]


SMALL_KERNELS_PROBE = """
import os, torch
def threads(): return len(os.listdir("/proc/self/task"))
def most_threads_while_busy(work):
    results = [work() for _ in range(40)]  # queued: the device works for a while
    seen = threads()
    while not torch.openreg.current_stream().query():
        seen = max(seen, threads())
    return seen, results
torch.set_num_threads(1)
torch.openreg.set_kernel_threads(2)
small = torch.randn(32, 32).to("openreg")  # copies: no kernel yet
large = torch.randn(512, 64).to("openreg")
torch.openreg.synchronize()
before = threads()
during_small, _ = most_threads_while_busy(lambda: small.softmax(1).sum())
during_large, ys = most_threads_while_busy(lambda: large.softmax(1))
print(during_small - before, during_large - before,
      torch.allclose(ys[-1].cpu(), large.cpu().softmax(1)))
"""


def test_small_kernels_stay_on_one_thread():
    """With two kernel threads, kernels on fewer than 32,768 elements still run on the worker
    alone (PyTorch splits even a 32 x 32 softmax, and the CPU on two threads starts a thread
    for it); the first kernel on a larger tensor starts the worker's OpenMP thread."""
    result = run_python(SMALL_KERNELS_PROBE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "1", "True"]
    cpu = run_python("import os, torch\ntorch.set_num_threads(2)\n"
                     "n = len(os.listdir('/proc/self/task'))\ntorch.randn(32, 32).softmax(1)\n"
                     "print(len(os.listdir('/proc/self/task')) - n)")
    assert cpu.stdout.strip() == "1", "the probe's small softmax must be one PyTorch splits"


def test_seeded_random_numbers_do_not_depend_on_kernel_threads():
    """The random kernels split their work across the kernel's threads by position, not by
    thread: the same seed gives the same numbers on one thread or several."""
    result = run_python("""
import torch
draws = []
for threads in (1, 2):
    torch.openreg.set_kernel_threads(threads)
    torch.manual_seed(0)
    draws.append((torch.randn(1 << 20, device="openreg").cpu(),
                  torch.rand(300001, device="openreg").cpu(),
                  torch.nn.functional.dropout(torch.ones(1 << 20, device="openreg"), 0.3).cpu()))
print(all(torch.equal(a, b) for a, b in zip(*draws)))
""")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"

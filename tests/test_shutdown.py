"""Shutdown: exiting with work queued, Ctrl-C while waiting, a child killed mid-copy, a spawned
child that fails. Never a hang, never a crash; queued work completes or is dropped safely."""

import subprocess
import sys
import textwrap

from conftest import ROOT


def run(code: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def run_script(tmp_path, code: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """For spawn: the child re-imports __main__, which must be a file."""
    script = tmp_path / "probe.py"
    script.write_text(textwrap.dedent(code))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_exit_with_work_queued_on_streams():
    result = run("""
        import torch
        x = torch.randn(256, 256, device="openreg")
        streams = [torch.openreg.Stream() for _ in range(4)]
        for s in streams:
            with torch.openreg.stream(s):
                for _ in range(50):
                    y = x @ x          # queued; nobody waits for it
        print("exiting with work queued")
    """)
    assert result.returncode == 0, result.stderr
    assert "exiting with work queued" in result.stdout


def test_exit_right_after_a_thread_stopped_queueing():
    # (A *daemon* thread still inside a torch operator at exit aborts the interpreter with
    # "terminate called without an active exception": CPython ends it by unwinding through
    # torch's GIL guard. Native CPU tensors do the same; docs/troubleshooting.md says so.)
    result = run("""
        import threading, torch
        x = torch.randn(128, 128, device="openreg")
        stop = threading.Event()
        def loop():
            while not stop.is_set():
                x @ x
        t = threading.Thread(target=loop)
        t.start()
        stop.set()
        t.join()
        print("main thread exits, the thread's work still queued")
    """)
    assert result.returncode == 0, result.stderr
    assert "still queued" in result.stdout


def test_keyboard_interrupt_during_synchronize():
    result = run("""
        import os, signal, threading, time, torch
        # A shell that starts a job in the background ignores SIGINT for it; restore Python's
        # handler so that Ctrl-C (here: SIGINT from a timer) raises KeyboardInterrupt.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        x = torch.ones(1024, device="openreg")
        with torch.openreg.faults.stream_delay(50_000):     # 50 ms per task: a slow device
            for _ in range(20):
                x = x + 1
            threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
            t0 = time.perf_counter()
            try:
                torch.openreg.synchronize()
                print("synchronize returned")
            except KeyboardInterrupt:
                print("KeyboardInterrupt after", round(time.perf_counter() - t0, 1), "s")
        print("device still works:", x.sum().item() == 21 * 1024)
    """)
    assert result.returncode == 0, result.stderr
    assert "KeyboardInterrupt after" in result.stdout
    assert "device still works: True" in result.stdout


def test_child_killed_mid_copy_leaves_the_parent_working(tmp_path):
    result = run_script(tmp_path, """
        import signal, time, torch, torch.multiprocessing as mp

        def copier():
            big = torch.randn(1 << 22)
            while True:
                big.to("openreg").cpu()

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            child = ctx.Process(target=copier)
            child.start()
            time.sleep(3)                 # the child is in the middle of its copies
            child.kill()
            child.join(30)
            print("child exit code", child.exitcode)
            x = torch.arange(10., device="openreg")
            print("parent works:", x.sum().item() == 45.0)
    """)
    assert result.returncode == 0, result.stderr
    assert f"child exit code -{9}" in result.stdout
    assert "parent works: True" in result.stdout


def test_spawned_child_that_fails_is_reported_not_waited_on_forever(tmp_path):
    result = run_script(tmp_path, """
        import torch, torch.multiprocessing as mp

        def child(rank):
            x = torch.ones(4, device="openreg")
            if rank == 1:
                raise ValueError("rank 1 failed on purpose")
            return x.sum().item()

        if __name__ == "__main__":
            try:
                mp.spawn(child, nprocs=2, join=True)
            except mp.ProcessRaisedException as e:
                print("parent saw:", "rank 1 failed on purpose" in str(e))
    """)
    assert result.returncode == 0, result.stderr
    assert "parent saw: True" in result.stdout

"""Lifecycle: lazy initialization, fork and spawn, and the topology the environment sets."""

import subprocess
import sys
import textwrap

from conftest import run_example, run_python


def test_fork_after_initialization_raises_clearly():
    code = textwrap.dedent("""
        import os, torch
        x = torch.ones(2, device="openreg")
        pid = os.fork()
        if pid == 0:
            outcomes = []
            for attempt in (lambda: torch.openreg.current_device(),
                            lambda: torch.ones(2, device="openreg"),
                            lambda: x + 1):
                try:
                    attempt()
                    outcomes.append("worked")
                except RuntimeError as e:
                    outcomes.append("spawn" in str(e))
            print(outcomes, flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
        print("parent still works:", (x + 1).sum().item())
    """)
    result = run_python(code, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "[True, True, True]" in result.stdout
    assert "parent still works: 4.0" in result.stdout


def test_fork_before_initialization_is_fine():
    code = textwrap.dedent("""
        import os, torch
        pid = os.fork()
        if pid == 0:
            print("child:", torch.ones(3, device="openreg").sum().item(), flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
    """)
    assert "child: 3.0" in run_python(code, timeout=60).stdout


def test_spawn_works(tmp_path):
    script = tmp_path / "spawn_job.py"
    script.write_text(textwrap.dedent("""
        import torch
        import torch.multiprocessing as mp

        def work(rank, results):
            x = torch.full((4,), float(rank + 1), device=f"openreg:{rank}")
            results.put((rank, (x * 10).sum().item()))

        if __name__ == "__main__":
            torch.ones(1, device="openreg")  # the parent has started the runtime
            ctx = mp.get_context("spawn")
            results = ctx.SimpleQueue()
            mp.spawn(work, args=(results,), nprocs=2)
            print(sorted(results.get() for _ in range(2)))
    """))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[(0, 40.0), (1, 80.0)]"


def test_visible_devices_select_and_reorder():
    code = ("import torch\n"
            "print(torch.openreg.device_count(),"
            " [torch.openreg.get_device_properties(i)['physical_id']"
            " for i in range(torch.openreg.device_count())])")
    assert run_python(code, env={"OPENREG_DEVICE_COUNT": "4", "OPENREG_VISIBLE_DEVICES": "3,1"}
                      ).stdout.strip() == "2 [3, 1]"
    # Like CUDA_VISIBLE_DEVICES, the list ends at the first invalid entry.
    assert run_python(code, env={"OPENREG_VISIBLE_DEVICES": "1,7,0"}).stdout.strip() == "1 [1]"


def test_memory_capacity_from_environment():
    code = "import torch; print(torch.openreg.get_device_properties(0)['total_memory'])"
    assert run_python(code, env={"OPENREG_DEVICE_MEMORY": "512M"}).stdout.strip() == str(512 << 20)


def test_lifecycle_example():
    out = run_example("lifecycle.py", timeout=120)
    assert "initialized before first use: False" in out and "initialized after: True" in out
    assert "forked child: " in out and "'spawn' start method" in out
    assert "spawned child 0: 2.0" in out and "spawned child 1: 4.0" in out

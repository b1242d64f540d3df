"""The orccl c10d backend: collectives, DDP, FSDP2 + checkpoint, faults (docs/distributed.md).

Covers DISTRIBUTED_RUN, DISTRIBUTED_LAUNCH, DISTRIBUTED_WORK_WAIT, DISTRIBUTED_CHECK_PEERS
(worker `collectives`, under torchrun), DISTRIBUTED_EXAMPLE_* (examples/distributed.py under
mp.spawn and torchrun) and the timeout of a dead peer (worker `fault`). Every process runs with a
timeout and is killed if the test fails.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(args: list[str], timeout: float, env: dict | None = None) -> subprocess.CompletedProcess:
    """Runs a command in its own process group; on timeout the whole group is killed."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env={**os.environ, **(env or {})}, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"{args} hung for {timeout} s:\n{out}\n{err}") from None
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


# ---------------------------------------------------------------- worker side
def worker_collectives() -> None:
    """Under torchrun: every collective on openreg tensors, checked against its definition."""
    import torch
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dev = torch.device("openreg", rank)
    torch.accelerator.set_device_index(rank)
    dist.init_process_group("cpu:gloo,openreg:orccl", device_id=dev, timeout=timedelta(seconds=60))
    assert dist.get_backend() == "cpu:gloo,openreg:orccl"

    def full(v, n=4, dtype=torch.float32):
        return torch.full((n,), float(v), device=dev, dtype=dtype)

    def check(name, got, want):
        got = got.cpu() if isinstance(got, torch.Tensor) else torch.stack([g.cpu() for g in got])
        want = torch.as_tensor(want, dtype=got.dtype)
        assert torch.equal(got, want.expand_as(got)), f"{name}: rank {rank} got {got} want {want}"

    r1 = rank + 1  # rank 0 holds 1, rank 1 holds 2
    for op, want in [(dist.ReduceOp.SUM, 3.0), (dist.ReduceOp.AVG, 1.5), (dist.ReduceOp.MIN, 1.0),
                     (dist.ReduceOp.MAX, 2.0), (dist.ReduceOp.PRODUCT, 2.0)]:
        t = full(r1)
        dist.all_reduce(t, op=op)
        check(f"all_reduce {op}", t, want)
    t = full(r1, dtype=torch.int64)
    dist.all_reduce(t)
    check("all_reduce int64", t, 3)
    t = full(r1)
    dist.broadcast(t, src=1)
    check("broadcast", t, 2.0)
    t = full(r1)
    dist.reduce(t, dst=0)
    if rank == 0:
        check("reduce", t, 3.0)
    outs = [full(-1) for _ in range(world)]
    dist.all_gather(outs, full(r1))
    check("all_gather", outs, torch.tensor([[1.0] * 4, [2.0] * 4]))
    out = torch.empty(8, device=dev)
    dist.all_gather_into_tensor(out, full(r1))
    check("all_gather_into_tensor", out, torch.tensor([1.0] * 4 + [2.0] * 4))
    out = full(-1, 2)
    dist.reduce_scatter(out, [full(r1, 2), full(10 * r1, 2)])
    check("reduce_scatter", out, 3.0 if rank == 0 else 30.0)
    out = full(-1, 2)
    dist.reduce_scatter_tensor(out, torch.arange(4.0, device=dev) * r1)
    check("reduce_scatter_tensor", out, torch.tensor([0.0, 3.0] if rank == 0 else [6.0, 9.0]))
    # A pre-multiplied sum scales the inputs: the collective reads the caller's
    # tensor and must leave it as it was, while all_reduce scales its own.
    inp = torch.arange(4.0, device=dev) * r1
    dist.reduce_scatter_tensor(out, inp, op=dist._make_nccl_premul_sum(0.5))
    check("reduce_scatter_tensor premul_sum", out,
          torch.tensor([0.0, 1.5] if rank == 0 else [3.0, 4.5]))
    check("reduce_scatter_tensor premul_sum input", inp, torch.arange(4.0) * r1)
    t = full(r1)
    dist.all_reduce(t, op=dist._make_nccl_premul_sum(2.0))
    check("all_reduce premul_sum", t, 6.0)
    outs = [full(-1, 2) for _ in range(world)]
    dist.all_to_all(outs, [full(10 * r1 + 0, 2), full(10 * r1 + 1, 2)])
    check("all_to_all", outs, torch.tensor([[10.0 + rank] * 2, [20.0 + rank] * 2]))
    out = full(-1)
    dist.all_to_all_single(out, torch.tensor([10.0, 10.0, 11.0, 11.0], device=dev) * r1)
    check("all_to_all_single", out,
          torch.tensor([10.0, 10.0, 20.0, 20.0] if rank == 0 else [11.0, 11.0, 22.0, 22.0]))
    gathered = [full(-1) for _ in range(world)] if rank == 0 else None
    dist.gather(full(r1), gathered, dst=0)
    if rank == 0:
        check("gather", gathered, torch.tensor([[1.0] * 4, [2.0] * 4]))
    out = full(-1)
    dist.scatter(out, [full(5), full(6)] if rank == 0 else None, src=0)
    check("scatter", out, 5.0 + rank)
    dist.barrier()
    # point to point: blocking, non-blocking, batched
    if rank == 0:
        dist.send(full(7), dst=1)
    else:
        t = full(-1)
        dist.recv(t, src=0)
        check("send/recv", t, 7.0)
    peer = 1 - rank
    t = full(-1)
    works = [dist.isend(full(100 + rank), dst=peer), dist.irecv(t, src=peer)]
    for w in works:
        w.wait()
    check("isend/irecv", t, 100.0 + peer)
    t = full(-1, 1 << 20)  # 4 MiB each way: larger than a socket buffer
    ops = [dist.P2POp(dist.isend, full(200 + rank, 1 << 20), peer), dist.P2POp(dist.irecv, t, peer)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    check("batch_isend_irecv", t, 200.0 + peer)
    # coalesced, as DDP and FSDP issue them
    a, b = full(r1), full(10 * r1, 3, torch.float64)
    with dist._coalescing_manager(device=dev, async_ops=True) as cm:
        dist.all_reduce(a)
        dist.all_reduce(b)
    cm.wait()
    check("coalesced all_reduce a", a, 3.0)
    check("coalesced all_reduce b", b, 30.0)
    # functional collectives (what torch.compile and DTensor use)
    t = funcol.all_reduce(full(r1), "sum", dist.group.WORLD)
    check("funcol.all_reduce", funcol.wait_tensor(t), 3.0)
    t = funcol.all_gather_tensor(full(r1, 2), 0, dist.group.WORLD)
    check("funcol.all_gather_tensor", funcol.wait_tensor(t), torch.tensor([1.0, 1.0, 2.0, 2.0]))
    t = funcol.reduce_scatter_tensor(torch.arange(4.0, device=dev), "sum", 0, dist.group.WORLD)
    check("funcol.reduce_scatter_tensor", funcol.wait_tensor(t),
          torch.tensor([0.0, 2.0] if rank == 0 else [4.0, 6.0]))
    # Work semantics: asynchronous, the caller's stream waits, futures complete
    t = full(r1, 1 << 16)
    work = dist.all_reduce(t, async_op=True)
    fut = work.get_future().then(lambda f: f.value()[0] * 2)
    work.wait()  # the current stream waits: the next kernel sees the result
    check("async all_reduce", t + 0, 3.0)
    check("get_future().then", fut.wait(), 6.0)
    torch.accelerator.synchronize()
    assert work.is_completed() and work.is_success()
    # the CPU part of the group is plain Gloo
    c = torch.full((2,), float(r1))
    dist.all_reduce(c)
    assert c.tolist() == [3.0, 3.0]
    # ranks that disagree on shape or dtype get an error naming both
    for bad in (full(1, 4 + rank), full(1, 4, torch.float32 if rank == 0 else torch.int32)):
        try:
            dist.all_reduce(bad)
            bad.cpu()
        except RuntimeError as e:
            assert "every rank must pass the same shape and dtype" in str(e), e
            print(f"rank {rank} mismatch error: {str(e).splitlines()[0][:160]}")
        else:
            raise AssertionError("a mismatched all_reduce passed")
    t = full(r1)
    dist.all_reduce(t)  # the group still works after the refused collective
    check("all_reduce after mismatch", t, 3.0)
    dist.destroy_process_group()
    print(f"rank {rank}: collectives ok")


def worker_fault(rank: int, port: int, mode: str) -> None:
    """Rank 1 dies (mode "exit") or stops taking part ("stall") after joining; rank 0's next
    collective must fail, not hang."""
    import torch
    import torch.distributed as dist

    dev = torch.device("openreg", rank)
    torch.accelerator.set_device_index(rank)
    dist.init_process_group(init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
                            device_id=dev, timeout=timedelta(seconds=5))
    t = torch.ones(4, device=dev)
    dist.all_reduce(t)
    t.cpu()
    if rank == 1:
        if mode == "stall":
            time.sleep(60)  # alive, connected, silent: only the timeout can end rank 0's wait
        os._exit(0)  # dies without a word to its peer
    start = time.monotonic()
    try:
        dist.all_reduce(t)
        t.cpu()  # the failure reaches the caller at the next synchronize of its stream
    except RuntimeError as e:
        print(f"rank 0 raised after {time.monotonic() - start:.1f} s: "
              f"{str(e).splitlines()[0][:200]}")
        os._exit(0)
    print("rank 0: no error")
    os._exit(1)


# ---------------------------------------------------------------- tests
@pytest.mark.parametrize("staged", [False, True], ids=["in-place", "staged"])
def test_collectives_under_torchrun(staged):
    """Collectives use device memory in place; OPENREG_STAGE_COLLECTIVES=1 stages them through
    pinned copies instead: both give every collective's definition."""
    env = dict(os.environ, OPENREG_STAGE_COLLECTIVES="1") if staged else None
    result = run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                  "--nproc-per-node", "2", __file__, "collectives"], timeout=240, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    for rank in (0, 1):
        assert f"rank {rank}: collectives ok" in result.stdout
        assert f"rank {rank} mismatch error" in result.stdout


@pytest.mark.parametrize("launcher", ["mp.spawn", "torchrun"])
def test_ddp_fsdp_checkpoint_example(launcher):
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                "--nproc-per-node", "2"]
    args = ([] if launcher == "mp.spawn" else torchrun) + ["examples/distributed.py"]
    result = run([sys.executable] + args if launcher == "mp.spawn" else args, timeout=300)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "backend: orccl, world size 2" in out
    assert "DDP CNN matches one process on the whole batch: True" in out
    assert "FSDP2 transformer block matches one process on the whole batch: True" in out
    assert "sharded checkpoint saved and loaded back: True" in out


@pytest.mark.parametrize("mode", ["exit", "stall"])
def test_dead_peer_raises_within_timeout(mode):
    port = free_port()
    procs = [subprocess.Popen([sys.executable, __file__, "fault", str(r), str(port), mode],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                              start_new_session=True) for r in (0, 1)]
    try:
        out0, err0 = procs[0].communicate(timeout=120)
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
    assert procs[0].returncode == 0, out0 + err0
    seconds = float(out0.split("raised after ")[1].split(" s")[0])
    assert seconds < 5 + 5, out0  # the configured timeout, plus slack for a loaded machine
    if mode == "stall":
        assert "Timed out" in out0, out0
    else:
        assert "by peer" in out0, out0  # Gloo: "Connection closed by peer" or "... reset by peer"


def test_2d_mesh_fsdp_tp_example():
    """init_process_group(device_id=...) then a 2 x 2 init_device_mesh: the group is split."""
    result = run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                  "--nproc-per-node", "4", "examples/distributed_mesh.py"], timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FSDP2 x TP matches one device: True" in result.stdout, result.stdout


def test_subgroups_and_recv_into_tensor_that_requires_grad():
    """Four ranks on a group bound to a device: new_group (with ranks outside it),
    new_subgroups and split_group; and a receive into a leaf that requires grad, as on Gloo."""
    result = run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                  "--nproc-per-node", "4", __file__, "groups"], timeout=150)
    assert result.returncode == 0, result.stdout + result.stderr
    for rank in range(4):
        assert f"rank {rank}: groups ok" in result.stdout, result.stdout
    assert "recv into requires_grad: [5.0, 5.0, 5.0] True" in result.stdout, result.stdout


def test_pipeline_example():
    result = run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                  "--nproc-per-node", "2", "examples/distributed_pipeline.py"], timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    for schedule in ("ScheduleGPipe", "Schedule1F1B"):
        assert f"{schedule} matches the unpipelined model: True" in result.stdout, result.stdout


def test_restart_resumes_from_the_last_checkpoint(tmp_path):
    """torchrun --max-restarts 1: rank 1 dies at step 3 of the first attempt; torchrun starts
    both ranks again, they load the checkpoint of step 2 and end equal to an uninterrupted run."""
    result = run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                  "--nproc-per-node", "2", "--max-restarts", "1",
                  "examples/distributed_restart.py", str(tmp_path), "--crash-at", "3"],
                 timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "attempt 1 started at step 3" in result.stdout, result.stdout + result.stderr
    assert "matches an uninterrupted run: True" in result.stdout, result.stdout
    assert (tmp_path / "latest").read_text() == "5"


def test_two_nodes_on_loopback():
    """Two torchrun launches, one process each, meet at a c10d rendezvous as two nodes."""
    port = free_port()
    procs = [subprocess.Popen(
        [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--node-rank", str(node),
         "--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint",
         f"127.0.0.1:{port}", "--rdzv-id", "two-nodes", "examples/distributed_pipeline.py"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        start_new_session=True) for node in (0, 1)]
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=180))
    except subprocess.TimeoutExpired:
        raise AssertionError(f"two nodes hung: {outs}") from None
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, out + err
    stdout = "".join(out for out, _ in outs)  # the last stage prints, on whichever node it is
    for schedule in ("ScheduleGPipe", "Schedule1F1B"):
        assert f"{schedule} matches the unpipelined model: True" in stdout, stdout


def worker_groups() -> None:
    import torch
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    dev = torch.device("openreg", rank % 2)
    torch.accelerator.set_device_index(dev.index)
    dist.init_process_group(device_id=dev)  # bound: subgroups are split from this group

    def summed(value, group):
        t = torch.full((2,), float(value), device=dev)
        dist.all_reduce(t, group=group)
        return t.cpu().tolist()

    odd_even = dist.split_group(split_ranks=[[0, 2], [1, 3]])
    assert odd_even.size() == 2 and summed(rank, odd_even) == [2.0 + 2 * (rank % 2)] * 2
    halves, _ = dist.new_subgroups(2)  # {0, 1} and {2, 3}
    assert summed(rank, halves) == ([1.0, 1.0] if rank < 2 else [5.0, 5.0])
    # Last: split_group names a subgroup by the number of groups this rank is in, which
    # differs between the ranks once some are outside a group (torch's naming, any backend).
    pair = dist.new_group([0, 1])  # ranks 2 and 3 are outside it
    if rank < 2:
        assert summed(rank, pair) == [1.0, 1.0]
    if rank == 0:
        dist.send(torch.full((3,), 5.0, device=dev), dst=1)
    elif rank == 1:
        t = torch.zeros(3, device=dev, requires_grad=True)
        dist.recv(t, src=0)
        print("recv into requires_grad:", t.detach().cpu().tolist(), t.requires_grad)
    assert summed(rank, None) == [6.0, 6.0]  # the whole group still works
    dist.destroy_process_group()
    print(f"rank {rank}: groups ok")


if __name__ == "__main__":
    if sys.argv[1] == "collectives":
        worker_collectives()
    elif sys.argv[1] == "groups":
        worker_groups()
    elif sys.argv[1] == "fault":
        worker_fault(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])

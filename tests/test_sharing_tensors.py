"""Openreg tensors shared across processes through torch.multiprocessing (spawn).

Covers the chapter "Sharing tensors across processes": SHARING_REDUCE_TENSOR,
SHARING_REBUILD, SHARING_REGISTER, IPC_SHARE_STORAGE, IPC_OPEN_STORAGE, IPC_SENT_BLOCK,
IPC_RECEIVED_BLOCK, DRIVER_IPC_* (the memfd window, the control block's marker and references).

Every test bounds every wait, and the `children` context kills whatever it started when the
test fails, so a broken sharing path fails fast instead of leaving processes waiting.
"""

import gc
import multiprocessing.reduction
import os
import pickle
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest
import torch
import torch.multiprocessing as mp
from conftest import ROOT

WAIT = 60  # seconds any single wait may take before the test fails


@contextmanager
def children():
    """Starts spawned processes; on exit joins them (bounded) and kills any left."""
    ctx = mp.get_context("spawn")
    started = []

    def start(target, *args):
        p = ctx.Process(target=target, args=args, daemon=True)
        p.start()
        started.append(p)
        return p

    failed = False
    try:
        yield ctx, start
    except BaseException:
        failed = True
        raise
    finally:
        deadline = time.monotonic() + (0 if failed else WAIT)
        for p in started:
            p.join(max(0.0, deadline - time.monotonic()))
        stuck = [p for p in started if p.is_alive()]
        for p in stuck:
            p.kill()
            p.join(5)
        if stuck and not failed:
            raise AssertionError(f"{len(stuck)} child process(es) did not exit and were killed")


# ---- children (module level, so spawned processes can import them) ----

def send_after_gated_work(outbox, done, exit_without_opening):
    from conftest import gate

    t = torch.zeros(1024, device="openreg")
    side = torch.openreg.Stream()
    with torch.openreg.stream(side), gate(side) as open_gate:
        t.fill_(7)  # queued behind the gate: not done when the tensor is sent
        outbox.put(t)
        if exit_without_opening:
            done.wait(WAIT)  # the receiver has the tensor
            os._exit(0)  # the queued work never runs
        time.sleep(0.5)
        open_gate()
    done.wait(WAIT)


def send_and_exit(outbox):
    outbox.put(torch.arange(4.0, device="openreg"))


def hold_until_told(inbox, outbox, release):
    t = inbox.get(timeout=WAIT)
    outbox.put(t[0].item())
    release.wait(WAIT)
    del t
    gc.collect()
    outbox.put("released")


def receive_arg(t, conn):
    conn.send((t.device.type, t.tolist()))
    received = conn.recv()  # a tensor through the pipe
    received.add_(1)
    torch.openreg.synchronize()
    conn.send("added")


def record_on_a_side_stream(inbox, outbox):
    t = inbox.get(timeout=WAIT)
    side = torch.openreg.Stream()
    with torch.openreg.stream(side):
        t.add_(1)
    t.record_stream(side)  # memory of another process: nothing to record, no error
    del t
    gc.collect()  # releasing the memory waits for the side stream's add_
    outbox.put("released")


class OpenRegRange(torch.utils.data.Dataset):
    """Item i is a tensor of three i's, made on the device by the worker."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        return torch.full((3,), float(i), device="openreg"), torch.tensor(i, device="openreg")


# ---- tests ----

def test_receiver_waits_for_the_producers_queued_work():
    with children() as (ctx, start):
        outbox, done = ctx.Queue(), ctx.Event()
        start(send_after_gated_work, outbox, done, False)
        t = outbox.get(timeout=WAIT)
        assert t.device == torch.device("openreg:0")
        assert t.cpu().eq(7).all()  # not the zeros from before the gated fill_
        done.set()


def test_producer_exit_with_pending_work_is_an_error_not_a_hang():
    with children() as (ctx, start):
        outbox, done = ctx.Queue(), ctx.Event()
        p = start(send_after_gated_work, outbox, done, True)
        t = outbox.get(timeout=WAIT)
        done.set()
        p.join(WAIT)
        with pytest.raises(RuntimeError, match=r"exited before its work on the memory completed"):
            t.cpu()


def test_producer_gone_before_receive_is_a_clear_error():
    with children() as (ctx, start):
        outbox = ctx.Queue()
        p = start(send_and_exit, outbox)
        p.join(WAIT)
        assert p.exitcode == 0
        with pytest.raises(RuntimeError, match=r"the sender exited"):
            outbox.get(timeout=WAIT)


def test_memory_is_not_reused_until_every_receiver_released_it():
    n = 1 << 18
    control = torch.empty(n, device="openreg")
    reused = control.data_ptr()
    del control
    assert torch.empty(n, device="openreg").data_ptr() == reused  # the cache reuses a block

    t = torch.full((n,), 5.0, device="openreg")
    with children() as (ctx, start):
        inbox, outbox, release = ctx.Queue(), ctx.Queue(), ctx.Event()
        start(hold_until_told, inbox, outbox, release)
        inbox.put(t)
        assert outbox.get(timeout=WAIT) == 5.0
        held = t.data_ptr()
        del t
        gc.collect()
        assert torch.openreg.ipc_collect() == 1  # the receiver still holds it
        others = [torch.empty(n, device="openreg") for _ in range(4)]
        assert held not in [o.data_ptr() for o in others]
        del others
        release.set()
        assert outbox.get(timeout=WAIT) == "released"
    assert torch.openreg.ipc_collect() == 0
    assert torch.empty(n, device="openreg").data_ptr() == held


def test_record_stream_on_shared_storages():
    """As with CUDA, record_stream works on a shared storage in both processes."""
    from conftest import gate

    n = 1 << 18
    t = torch.ones(n, device="openreg")
    with children() as (ctx, start):
        inbox, outbox = ctx.Queue(), ctx.Queue()
        start(record_on_a_side_stream, inbox, outbox)
        inbox.put(t)
        assert outbox.get(timeout=WAIT) == "released"
    assert torch.equal(t.cpu(), torch.full((n,), 2.0))  # the receiver's add_ ran first
    # The sender's storage now wraps its block; record_stream reaches the block.
    side = torch.openreg.Stream()
    side.wait_stream(torch.openreg.current_stream())
    address = t.data_ptr()
    with gate(side):
        with torch.openreg.stream(side):
            y = t * 2
        t.record_stream(side)
        del t
        gc.collect()
        assert torch.openreg.ipc_collect() == 0  # every receiver released it
        z = torch.empty(n, device="openreg")
        assert z.data_ptr() != address  # the block waits for the side stream
    side.synchronize()
    assert torch.equal(y.cpu(), torch.full((n,), 4.0))


def test_process_args_and_pipes():
    t = torch.tensor([1.0, 2.0, 3.0], device="openreg:1")
    with children() as (ctx, start):
        parent, child = ctx.Pipe()
        start(receive_arg, t, child)
        assert parent.poll(WAIT)
        assert parent.recv() == ("openreg", [1.0, 2.0, 3.0])
        u = torch.zeros(2, device="openreg")
        parent.send(u)
        assert parent.poll(WAIT) and parent.recv() == "added"
    assert u.tolist() == [1.0, 1.0]


def test_dataloader_workers_feed_openreg_tensors():
    loader = torch.utils.data.DataLoader(
        OpenRegRange(), batch_size=4, num_workers=2, multiprocessing_context="spawn", timeout=WAIT
    )
    batches = list(loader)
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert all(b[0].device.type == "openreg" for b in batches)
    assert torch.cat([b[0] for b in batches]).cpu().equal(
        torch.arange(10.0).repeat_interleave(3).view(10, 3)
    )


def test_storage_alone_is_refused_like_cuda():
    storage = torch.ones(2, device="openreg").untyped_storage()
    with pytest.raises(RuntimeError, match="Cannot pickle openreg storage"):
        multiprocessing.reduction.ForkingPickler.dumps(storage)


def test_plain_pickle_still_copies():
    """pickle (not multiprocessing) keeps PyTorch's copy semantics: bytes, not a handle."""
    t = torch.arange(3.0, device="openreg")
    u = pickle.loads(pickle.dumps(t))
    u.add_(1)
    assert t.tolist() == [0.0, 1.0, 2.0] and u.device == t.device


def test_example_producer_and_two_consumers():
    """The chapter's example: one producer, two consumers, in-place writes seen by the producer."""
    # Run by path, not with -c: spawned children re-import the script's functions.
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "sharing_tensors.py")],
                            capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "consumer results: [(0, 4.0), (1, 8.0), (2, 12.0), (3, 16.0)]" in out
    assert "consumers exited with [0, 0]" in out
    assert "producer sees the consumers' writes: [-1.0, -2.0, -3.0, -4.0]" in out
    assert "still held by other processes after del: 0" in out

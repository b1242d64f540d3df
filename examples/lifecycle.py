"""Lifecycle: what happens to the device across fork and spawn."""

import os

import torch
import torch.multiprocessing as mp


def child_job(rank: int) -> None:
    x = torch.ones(2, device="openreg") * (rank + 1)
    print(f"spawned child {rank}: {x.sum().item()}", flush=True)


# LITERALINCLUDE START: EXAMPLE_LIFECYCLE
if __name__ == "__main__":
    print("initialized before first use:", torch.openreg.is_initialized())
    x = torch.ones(2, device="openreg")  # lazy initialization happens here
    print("initialized after:", torch.openreg.is_initialized())

    pid = os.fork()  # the child inherits no worker threads
    if pid == 0:
        try:
            torch.ones(2, device="openreg")
        except RuntimeError as error:
            print("forked child:", error)
        os._exit(0)
    os.waitpid(pid, 0)

    mp.spawn(child_job, nprocs=2)  # spawned children start the runtime afresh
# LITERALINCLUDE END: EXAMPLE_LIFECYCLE

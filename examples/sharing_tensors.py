"""Openreg tensors passed to other processes: a producer, two consumers, shared memory."""

import torch
import torch.multiprocessing as mp


# LITERALINCLUDE START: EXAMPLE_SHARING_CONSUMER
def consumer(jobs, results):
    """Takes (index, tensor) jobs until None; reports the sum and negates in place."""
    while (job := jobs.get(timeout=60)) is not None:
        index, t = job  # t maps the producer's device memory: no copy was made
        results.put((index, t.sum().item()))
        t.neg_()
        torch.openreg.synchronize()  # the write is done before we report back
        results.put("written")
# LITERALINCLUDE END: EXAMPLE_SHARING_CONSUMER


def main():
    # LITERALINCLUDE START: EXAMPLE_SHARING_PRODUCER
    ctx = mp.get_context("spawn")  # a forked child cannot use the device
    jobs, results = ctx.Queue(), ctx.Queue()
    workers = [ctx.Process(target=consumer, args=(jobs, results)) for _ in range(2)]
    for w in workers:
        w.start()
    tensors = [torch.full((4,), i + 1.0, device="openreg") for i in range(4)]
    for job in enumerate(tensors):
        jobs.put(job)
    for _ in workers:
        jobs.put(None)
    replies = [results.get(timeout=60) for _ in range(2 * len(tensors))]
    for w in workers:
        w.join(60)
    print("consumer results:", sorted(r for r in replies if r != "written"))
    print("producer sees the consumers' writes:", [t[0].item() for t in tensors])
    # LITERALINCLUDE END: EXAMPLE_SHARING_PRODUCER

    # LITERALINCLUDE START: EXAMPLE_SHARING_RELEASE
    del tensors
    print("still held by other processes after del:", torch.openreg.ipc_collect())
    # LITERALINCLUDE END: EXAMPLE_SHARING_RELEASE
    print("consumers exited with", [w.exitcode for w in workers])


if __name__ == "__main__":
    main()

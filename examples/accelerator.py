"""Device-generic code: torch.accelerator drives openreg with no openreg-specific call."""

import torch

# LITERALINCLUDE START: EXAMPLE_ACCELERATOR
acc = torch.accelerator.current_accelerator()
print("accelerator:", acc, "devices:", torch.accelerator.device_count())

with torch.accelerator.device_index(1):
    x = torch.randn(256, 256, device=acc)  # on device 1, the current one inside the block
    stream = torch.Stream(device=acc)
    stream.wait_stream(torch.accelerator.current_stream())  # x is made on the default stream
    with stream:
        y = x @ x
    torch.accelerator.synchronize()
print("x on", x.device, "| y on", y.device)

print("allocated on device 1:", torch.accelerator.memory_allocated(1))
free, total = torch.accelerator.get_memory_info(1)
print(f"device 1: {free >> 20} MiB free of {total >> 20} MiB")
dtypes = torch.accelerator.get_device_capability(1)["supported_dtypes"]
print("supports bfloat16:", torch.bfloat16 in dtypes, "| quantized qint8:", torch.qint8 in dtypes,
      "| quint4x2:", torch.quint4x2 in dtypes)
# LITERALINCLUDE END: EXAMPLE_ACCELERATOR

"""Runtime services from a user's side: memory statistics, out of memory, seeded generators."""

import torch

# LITERALINCLUDE START: EXAMPLE_RUNTIME_MEMORY
before = torch.accelerator.memory_allocated(0)
x = torch.empty(1024, 1024, device="openreg")  # 4 MiB from the caching allocator
print("allocated:", torch.accelerator.memory_allocated(0) - before, "bytes")
del x
print("after del:", torch.accelerator.memory_allocated(0) - before, "bytes (the block is cached)")

try:
    torch.empty(1 << 40, device="openreg")  # 4 TiB: more than the device has
except torch.OutOfMemoryError as error:
    print("OutOfMemoryError:", str(error).split(". ", 1)[1][:60], "...")
# LITERALINCLUDE END: EXAMPLE_RUNTIME_MEMORY

# LITERALINCLUDE START: EXAMPLE_RUNTIME_GENERATOR
g = torch.Generator(device="openreg").manual_seed(2024)
state = g.get_state()
print("seed:", g.initial_seed(), "state bytes:", state.numel())
torch.openreg.manual_seed_all(7)
print("default generators:", [gen.initial_seed() for gen in torch.openreg.default_generators])
# LITERALINCLUDE END: EXAMPLE_RUNTIME_GENERATOR

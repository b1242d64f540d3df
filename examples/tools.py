"""Tools: asking the dispatcher what it will do with openreg tensors."""

import torch

# LITERALINCLUDE START: EXAMPLE_DISPATCH_KEYS
x = torch.ones(2, 2, device="openreg")
# The keys a tensor carries, lowest priority first. PrivateUse1 is openreg's
# backend key; AutogradPrivateUse1 and AutocastPrivateUse1 come with it.
print(torch._C._dispatch_key_set(x))
print(torch._C._dispatch_key_for_device("openreg"))
# LITERALINCLUDE END: EXAMPLE_DISPATCH_KEYS

# Does openreg register a kernel of its own for an operator? If not, a composite
# implementation or the global CPU fallback serves it (tools/op_coverage.py tells which).
for op in ["aten::add.Tensor", "aten::mm", "aten::_cummax_helper", "aten::empty.memory_format"]:
    native = torch._C._dispatch_has_kernel_for_dispatch_key(op, "PrivateUse1")
    print(f"{op:28} {'openreg kernel' if native else 'no openreg kernel'}")

# LITERALINCLUDE START: EXAMPLE_DISPATCH_DUMP_TABLE
# Where each key's kernel for add.Tensor was registered, filtered to the keys
# an openreg tensor can reach.
keys = ("PrivateUse1", "AutogradPrivateUse1", "AutocastPrivateUse1", "CPU:")
table = torch._C._dispatch_dump_table("aten::add.Tensor")
for line in table.splitlines():
    if line.startswith(keys):
        key, _, where = line.partition(": registered at ")
        print(f"{key:22} {where.rsplit('/', 1)[-1]}")
# LITERALINCLUDE END: EXAMPLE_DISPATCH_DUMP_TABLE

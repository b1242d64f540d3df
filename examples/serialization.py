"""Checkpoints of openreg tensors, modules and optimizers; map_location; the private format;
storages."""

import io
import os
import subprocess
import sys
import tempfile

import torch

# LITERALINCLUDE START: EXAMPLE_SERIALIZATION_CHECKPOINT
torch.manual_seed(0)
model = torch.nn.Linear(4, 2).to("openreg:1")
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
model(torch.ones(3, 4, device="openreg:1")).sum().backward()
optimizer.step()
checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": 1}
path = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
torch.save(checkpoint, path)

loaded = torch.load(path, weights_only=True)  # tensors come back where they were saved
print("weight on", loaded["model"]["weight"].device,
      "| Adam state on", loaded["optimizer"]["state"][0]["exp_avg"].device)
restored = torch.nn.Linear(4, 2).to("openreg:1")
restored.load_state_dict(loaded["model"])
print("restored equals saved:", restored.weight.cpu().equal(model.weight.cpu()))
# LITERALINCLUDE END: EXAMPLE_SERIALIZATION_CHECKPOINT

# LITERALINCLUDE START: EXAMPLE_SERIALIZATION_MAP_LOCATION
for where in ("cpu", torch.device("openreg:0"), {"openreg:1": "openreg:0"},
              lambda storage, location: storage.openreg(0)):
    w = torch.load(path, map_location=where, weights_only=True)["model"]["weight"]
    print(f"map_location={type(where).__name__:<9} -> {w.device}")
# LITERALINCLUDE END: EXAMPLE_SERIALIZATION_MAP_LOCATION

# The same checkpoint read by a process that sees one openreg device, or none.
reader = """
import sys, torch
for where in (None, "cpu", {"openreg:1": "openreg:0"}):
    try:
        print(f"  map_location={where}: "
              f"{torch.load(sys.argv[1], map_location=where)['model']['weight'].device}")
    except RuntimeError as error:
        print(f"  map_location={where}: RuntimeError: {error}")
"""
for env in ({"OPENREG_DEVICE_COUNT": "1"}, {"OPENREG_VISIBLE_DEVICES": ""}):
    print(env)
    print(subprocess.run([sys.executable, "-c", reader, path], capture_output=True, text=True,
                         env={**os.environ, **env}).stdout, end="")

# LITERALINCLUDE START: EXAMPLE_SERIALIZATION_INTERNAL_FORMAT
t = torch.randn(8, 8, device="openreg")
torch.openreg.set_internal_format(t, "tiled")
print("metadata:", torch._utils.get_tensor_metadata(t))
buffer = io.BytesIO()
torch.save(t, buffer)
buffer.seek(0)
back = torch.load(buffer)
print("after save/load:", torch.openreg.internal_format(back),
      "| detach():", torch.openreg.internal_format(t.detach()),
      "| on the CPU:", torch._utils.get_tensor_metadata(t.cpu()))
# LITERALINCLUDE END: EXAMPLE_SERIALIZATION_INTERNAL_FORMAT

# LITERALINCLUDE START: EXAMPLE_SERIALIZATION_STORAGE
s = torch.arange(4, dtype=torch.float32, device="openreg").untyped_storage()
print("storage:", s.device, s.nbytes(), "bytes, is_openreg:", s.is_openreg)
s.resize_(32)  # grows on the device; the first 16 bytes are kept
print("after resize_(32):", torch.tensor([], device="openreg").set_(s)[:4].tolist())
host = torch.UntypedStorage(8).fill_(1)
print("CPU storage .openreg():", host.openreg().device, "| shared already:", s.is_shared())
shrunk = torch.ones(4, device="openreg")
shrunk.untyped_storage().resize_(0)
try:
    print(shrunk)
except RuntimeError as error:
    print("using a tensor whose storage was shrunk:", error)
# LITERALINCLUDE END: EXAMPLE_SERIALIZATION_STORAGE

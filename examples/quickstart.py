"""Quick start: an openreg tensor with nothing imported but torch (the backend autoloads)."""

# LITERALINCLUDE START: EXAMPLE_QUICKSTART
import torch

if not torch.openreg.is_available():
    raise SystemExit("OpenReg backend is not available in this build.")

print("OpenReg backend is available!")

device = torch.device("openreg")

x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
y = x + 2
print("Result y:\n", y)
print(f"Device of y: {y.device}")

z = y.cpu()
print("Result z:\n", z)
print(f"Device of z: {z.device}")
# LITERALINCLUDE END: EXAMPLE_QUICKSTART

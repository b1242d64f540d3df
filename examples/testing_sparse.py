"""A sparse COO tensor on openreg: its parts stay on the device, its arithmetic runs on the CPU."""

# LITERALINCLUDE START: EXAMPLE_SPARSE_COO
import warnings

import torch
import torch_openreg  # noqa: F401

warnings.simplefilter("ignore")  # the fallback's warnings; its counts are printed below
i = torch.tensor([[0, 1, 1], [2, 0, 2]])
v = torch.tensor([3.0, 4.0, 5.0])
s = torch.sparse_coo_tensor(i, v, (2, 3)).to("openreg")
print(s.layout, s.device, "indices on", s._indices().device, "values on", s._values().device)
torch.openreg.reset_fallback_counts()
print("moving it made no fallback:", torch.openreg.fallback_counts() == {})

# Autograd: the sparse product's gradient is added to the dense term's on the device.
w = torch.ones(2, 3, device="openreg", requires_grad=True)
((s * w).sum() + w.sum()).backward()
print("w.grad =", w.grad.cpu().tolist())
print("ran on the CPU:", sorted(torch.openreg.fallback_counts()))

try:
    torch.eye(2, device="openreg").to_sparse_csr()
except NotImplementedError as e:
    print("CSR:", str(e).split(" on openreg")[0])
# LITERALINCLUDE END: EXAMPLE_SPARSE_COO

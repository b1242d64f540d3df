"""torch.autocast on openreg: CUDA's cast policies, cached weight casts, custom_fwd/custom_bwd."""

import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

# LITERALINCLUDE START: EXAMPLE_AMP_POLICIES
x = torch.randn(8, 8, device="openreg")
print("default autocast dtype:", torch.get_autocast_dtype("openreg"))
with torch.autocast("openreg"):  # float16, as on CUDA
    print("mm ->", (x @ x).dtype)  # lower_precision_fp
    print("softmax ->", x.softmax(1).dtype)  # fp32_set_opt_dtype
    print("sum ->", (x @ x).sum().dtype)  # fp32_set_opt_dtype
    print("addcmul(float32, float16, float32) ->", torch.addcmul(x, x.half(), x).dtype)  # promote
    try:
        F.binary_cross_entropy(x.sigmoid(), torch.rand(8, 8, device="openreg"))
    except RuntimeError as error:
        print("binary_cross_entropy:", str(error).splitlines()[0])
with torch.autocast("openreg", dtype=torch.bfloat16):
    print("bfloat16 region: mm ->", (x @ x).dtype, "| autocast dtype:",
          torch.get_autocast_dtype("openreg"))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.autocast("openreg", dtype=torch.float64):
        print("float64 region: mm ->", (x @ x).dtype)
print("warning:", str(caught[0].message).splitlines()[0])
# LITERALINCLUDE END: EXAMPLE_AMP_POLICIES


# LITERALINCLUDE START: EXAMPLE_AMP_CACHE
class CountCasts(TorchDispatchMode):
    """Counts the dtype conversions that reach the device."""

    def __init__(self) -> None:
        super().__init__()
        self.casts = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.casts += func is torch.ops.aten._to_copy.default
        return func(*args, **(kwargs or {}))


layer = nn.Linear(64, 64).to("openreg")
inputs = torch.randn(4, 64, device="openreg")
for cache_enabled in (True, False):
    with torch.autocast("openreg", cache_enabled=cache_enabled), CountCasts() as counter:
        layer(layer(layer(inputs)))  # one weight and bias, used three times
    print(f"cache_enabled={cache_enabled}: {counter.casts} casts for three uses of one layer")
# LITERALINCLUDE END: EXAMPLE_AMP_CACHE


class Float32Product(torch.autograd.Function):
    """An operation that must run in float32, even inside an autocast region."""

    @staticmethod
    @torch.amp.custom_fwd(device_type="openreg", cast_inputs=torch.float32)
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        print("  forward sees", a.dtype, b.dtype,
              "| autocast on:", torch.is_autocast_enabled("openreg"))
        return a @ b

    @staticmethod
    @torch.amp.custom_bwd(device_type="openreg")
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        print("  backward sees", grad.dtype, "| autocast on:", torch.is_autocast_enabled("openreg"))
        return grad @ b.t(), a.t() @ grad


a = torch.randn(4, 4, device="openreg", requires_grad=True)
with torch.autocast("openreg"):
    out = Float32Product.apply(a.half(), a)
print("custom_fwd result:", out.dtype)
out.sum().backward()
print("gradient:", a.grad.dtype)

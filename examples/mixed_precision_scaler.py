"""torch.amp.GradScaler on openreg: a step with inf gradients is skipped, the scale adapts."""

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(8, 1).to("openreg")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 8, device="openreg"), torch.randn(16, 1, device="openreg")


# LITERALINCLUDE START: EXAMPLE_AMP_SCALER_SKIP
def step(scaler, poison=False):
    optimizer.zero_grad()
    with torch.autocast("openreg"):
        loss = nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    if poison:  # what an overflow in float16 looks like
        model.weight.grad[0, 0] = float("inf")
    before = model.weight.detach().clone()
    scaler.step(optimizer)
    scaler.update()
    moved = bool((before != model.weight.detach()).any())
    print(f"{'step, inf injected' if poison else 'step':18}: parameters updated: {moved!s:5} "
          f"scale now {scaler.get_scale():g}")


scaler = torch.amp.GradScaler("openreg", init_scale=2.0**16, growth_interval=2)
step(scaler)  # 2**16 is too much here: a float16 gradient overflows, the step is skipped
step(scaler)
step(scaler, poison=True)  # skipped, and the scale halves
step(scaler)
step(scaler)  # second clean step in a row: the scale doubles
# LITERALINCLUDE END: EXAMPLE_AMP_SCALER_SKIP

state = scaler.state_dict()
print("state_dict:", {k: v for k, v in state.items()})
restored = torch.amp.GradScaler("openreg")
restored.load_state_dict(state)
print("restored scale:", restored.get_scale(), "| growth tracker:",
      restored._get_growth_tracker())

# LITERALINCLUDE START: EXAMPLE_AMP_SCALER_CLIP
optimizer.zero_grad()
with torch.autocast("openreg"):
    loss = nn.functional.mse_loss(model(x), y)
scaler.scale(loss).backward()
scaled = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])
scaler.unscale_(optimizer)  # divides the gradients by the scale, on the device
norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
print(f"gradient norm: {scaled.item():.1f} scaled, {norm.item():.4f} after unscale_ "
      f"(ratio {scaled.item() / norm.item():g} = the scale)")
scaler.step(optimizer)  # does not unscale a second time
scaler.update()
# LITERALINCLUDE END: EXAMPLE_AMP_SCALER_CLIP

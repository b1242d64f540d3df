"""A CNN and a transformer block train under autocast on openreg, next to the CPU's autocast run."""

import torch
import torch.nn as nn


def small_cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(32, 10))


def transformer_block() -> nn.Module:
    return nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0,
                                      batch_first=True)


# LITERALINCLUDE START: EXAMPLE_AMP_TRAINING_LOOP
def train(make, inputs, targets, loss_fn, device, dtype, steps=6):
    """The usual AMP loop; the scaler is needed (and enabled) for float16 only."""
    torch.manual_seed(0)
    model = make().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.amp.GradScaler(device, enabled=dtype == torch.float16)
    x, y = inputs.to(device), targets.to(device)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        with torch.autocast(device, dtype=dtype):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)  # clip the true gradients, not the scaled ones
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    return losses
# LITERALINCLUDE END: EXAMPLE_AMP_TRAINING_LOOP


torch.manual_seed(1)
jobs = {
    "CNN": (small_cnn, torch.randn(16, 3, 16, 16), torch.randint(0, 10, (16,)),
            nn.functional.cross_entropy),
    "transformer": (transformer_block, torch.randn(4, 12, 64), torch.randn(4, 12, 64),
                    nn.functional.mse_loss),
}
torch.openreg.reset_fallback_counts()
for name, (make, inputs, targets, loss_fn) in jobs.items():
    reference = train(make, inputs, targets, loss_fn, "cpu", torch.bfloat16)
    print(f"{name + ', cpu bfloat16':30}" + " ".join(f"{v:.4f}" for v in reference))
    for dtype in (torch.float16, torch.bfloat16):
        losses = train(make, inputs, targets, loss_fn, "openreg", dtype)
        gap = max(abs(a - b) for a, b in zip(losses, reference))
        label = f"{name}, openreg {str(dtype)[6:]}"
        print(f"{label:30}" + " ".join(f"{v:.4f}" for v in losses)
              + f"  (max gap {gap:.1e})")
print(torch.openreg.fallback_report())

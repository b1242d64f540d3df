"""Two small models train on openreg with no operator falling back, and match the CPU
(docs/borrowed-kernels.md, "Models train with no fallback")."""

import torch
import torch.nn as nn


def small_cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Dropout(0.0), nn.Linear(32, 10))


def transformer_block() -> nn.Module:
    return nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0,
                                      batch_first=True)


# LITERALINCLUDE START: EXAMPLE_TRAIN_MODELS
def train(make, inputs, targets, loss_fn, device, steps=3):
    torch.manual_seed(0)
    model = make().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = inputs.to(device), targets.to(device)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item(), [p.detach().cpu() for p in model.parameters()]


torch.manual_seed(1)
jobs = {
    "CNN": (small_cnn, torch.randn(16, 3, 16, 16), torch.randint(0, 10, (16,)),
            nn.functional.cross_entropy),
    "transformer": (transformer_block, torch.randn(4, 12, 64), torch.randn(4, 12, 64),
                    nn.functional.mse_loss),
}
torch.openreg.reset_fallback_counts()
for name, (make, inputs, targets, loss_fn) in jobs.items():
    cpu_loss, cpu_params = train(make, inputs, targets, loss_fn, "cpu")
    dev_loss, dev_params = train(make, inputs, targets, loss_fn, "openreg")
    same = all(torch.allclose(a, b, atol=1e-4) for a, b in zip(cpu_params, dev_params))
    print(f"{name}: loss cpu {cpu_loss:.6f} openreg {dev_loss:.6f}, parameters match: {same}")
print(torch.openreg.fallback_report())
# LITERALINCLUDE END: EXAMPLE_TRAIN_MODELS

"""torchvision and timm on openreg, next to the CPU: the backend's kernel for torchvision::nms,
and ResNet-18 and a small vision transformer trained from random weights.
"""

import torch
import torch.nn.functional as F
from ecosystem_torchvision_schemas import compiled_ops_error, declare_torchvision_schemas

print("torchvision's compiled operators:", compiled_ops_error() or "loaded")
print("schemas declared by the workaround:", declare_torchvision_schemas())

import timm  # noqa: E402
import torchvision  # noqa: E402
from torchvision.ops import box_iou  # noqa: E402


# LITERALINCLUDE START: EXAMPLE_ECOSYSTEM_NMS_KERNEL
@torch.library.impl("torchvision::nms", "PrivateUse1")
def nms_openreg(dets: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    """torchvision::nms for openreg tensors: the overlaps on the device, the greedy pass on the
    host over one copied mask, the split torchvision's CUDA kernel makes."""
    order = scores.argsort(descending=True)
    ranked = dets[order]
    overlaps = (box_iou(ranked, ranked) > iou_threshold).cpu()
    keep = torch.ones(len(order), dtype=torch.bool)
    for i in range(len(order)):
        if keep[i]:
            keep[i + 1:] &= ~overlaps[i, i + 1:]  # a kept box suppresses the lower-scored ones
    return order[keep.to(order.device)]
# LITERALINCLUDE END: EXAMPLE_ECOSYSTEM_NMS_KERNEL


def reference_nms(dets: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> list[int]:
    """Greedy non-maximum suppression written out box by box, on the CPU."""
    def iou(a, b):
        w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
        h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
        area = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1])
        return w * h / (area - w * h)
    boxes, kept = dets.tolist(), []
    for i in sorted(range(len(boxes)), key=lambda i: -scores[i].item()):
        if all(iou(boxes[i], boxes[j]) <= iou_threshold for j in kept):
            kept.append(i)
    return kept


# LITERALINCLUDE START: EXAMPLE_ECOSYSTEM_NMS_CALL
torch.manual_seed(0)
corners = torch.rand(64, 2) * 20
boxes = torch.cat([corners, corners + 2 + 6 * torch.rand(64, 2)], dim=1)  # x1, y1, x2, y2
confidences = torch.rand(64)
kept = torch.ops.torchvision.nms(boxes.to("openreg"), confidences.to("openreg"), 0.3)
print(f"nms kept {len(kept)} of {len(boxes)} boxes on {kept.device}, the CPU reference's:",
      kept.tolist() == reference_nms(boxes, confidences, 0.3))
# LITERALINCLUDE END: EXAMPLE_ECOSYSTEM_NMS_CALL


def compare(name, make, steps, optimizer_class, **optimizer_args):
    """The same seeded training steps on the CPU and on openreg; losses and final weights."""
    torch.manual_seed(0)
    images, labels = torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))
    runs = {}
    for device in ("cpu", "openreg"):
        torch.manual_seed(1)
        model = make().to(device)
        runs[device] = train(model, images.to(device), labels.to(device), steps,
                             optimizer_class(model.parameters(), **optimizer_args))
    (cpu_losses, cpu_model), (losses, model) = runs["cpu"], runs["openreg"]
    print(f"{name} losses, CPU:    ", cpu_losses)
    print(f"{name} losses, openreg:", losses)
    difference = max((a - b.cpu()).abs().max().item()
                     for a, b in zip(cpu_model.state_dict().values(), model.state_dict().values())
                     if a.is_floating_point())
    print(f"{name} weights within 1e-3 of the CPU's:", difference < 1e-3)


# LITERALINCLUDE START: EXAMPLE_ECOSYSTEM_VISION_TRAINING
def train(model, images, labels, steps, optimizer):
    model.train()
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(round(loss.item(), 3))
    return losses, model


compare("ResNet-18", lambda: torchvision.models.resnet18(weights=None, num_classes=10), 3,
        torch.optim.SGD, lr=0.01, momentum=0.9)
compare("timm ViT", lambda: timm.create_model("vit_tiny_patch16_224", pretrained=False,
                                             num_classes=10, img_size=32, patch_size=8, depth=2,
                                             embed_dim=64, num_heads=2),
        3, torch.optim.AdamW, lr=1e-3)
# LITERALINCLUDE END: EXAMPLE_ECOSYSTEM_VISION_TRAINING

import torch
from inliner.runtime import custom_vjp


def weighted_fwd(x, weights):
    """ctx attributes read in a `for` header, a `with` item and an augmented assignment's value:
    reads, not writes, so the named residuals carry them."""
    weights_saved = list(weights)
    offset = 0.5
    autocast = False
    total = x * 0
    total += offset  # forward reads what it set, in an augmented assignment
    for w in weights_saved:
        total = total + x * w
    return total, (weights_saved, offset, autocast)


def weighted_bwd(residuals, g):
    weights, offset, autocast = residuals
    grad = g * 0
    for w in weights:
        grad = grad + g * w * 3
    with torch.autocast("cpu", enabled=autocast):
        grad = grad * 2
    grad += offset
    return grad, None


Weighted = custom_vjp(
    weighted_fwd,
    weighted_bwd,
    name="Weighted",
    ctx_attrs={0: "weights", 1: "offset", 2: "autocast"},
)


def scenario_weighted():
    x = torch.randn(4, requires_grad=True)
    return [x], Weighted(x, (1.0, -2.0))

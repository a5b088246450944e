import torch


class Weighted(torch.autograd.Function):
    """ctx attributes read in a `for` header, a `with` item and an augmented assignment's value:
    reads, not writes, so the named residuals carry them."""

    @staticmethod
    def forward(ctx, x, weights):
        ctx.weights = list(weights)
        ctx.offset = 0.5
        ctx.autocast = False
        total = x * 0
        total += ctx.offset  # forward reads what it set, in an augmented assignment
        for w in ctx.weights:
            total = total + x * w
        return total

    @staticmethod
    def backward(ctx, g):
        grad = g * 0
        for w in ctx.weights:
            grad = grad + g * w * 3
        with torch.autocast("cpu", enabled=ctx.autocast):
            grad = grad * 2
        grad += ctx.offset
        return grad, None


def scenario_weighted():
    x = torch.randn(4, requires_grad=True)
    return [x], Weighted.apply(x, (1.0, -2.0))

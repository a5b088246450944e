"""Forward calls a helper that reads tensor data into Python (`.tolist()`), which fake tensors reject."""
import torch


def largest_magnitude(t):
    values = t.detach().flatten().tolist()
    return max(abs(v) for v in values)


class NormalizeByMax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        peak = largest_magnitude(x)
        ctx.peak = peak
        return x / peak

    @staticmethod
    def backward(ctx, grad):
        return grad / ctx.peak * 3


def scenario_normalize():
    x = torch.randn(2, 3, requires_grad=True)
    return [x], NormalizeByMax.apply(x)

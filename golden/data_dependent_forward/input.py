"""Forwards that look at their data: a branch on a tensor's value, a value read with .item()."""
import torch


class ClipLarge(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.abs().max() > 1.0:
            return x.clamp(-1.0, 1.0)
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        return g * 3


class ScaleByNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        norm = x.norm().item()
        ctx.norm = norm
        return x / norm

    @staticmethod
    def backward(ctx, g):
        return g / ctx.norm * 2


def scenario_clip():
    x = (torch.randn(4) * 2).requires_grad_()
    return [x], ClipLarge.apply(x)


def scenario_scale_by_norm():
    x = torch.randn(4, requires_grad=True)
    return [x], ScaleByNorm.apply(x)

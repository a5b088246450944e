from typing import *  # noqa: F403

import torch


class Halve(torch.autograd.Function):
    """After `from typing import *`, `staticmethod` is still the builtin: typing exports no
    builtin's name (torch.utils.checkpoint and torch.nested write this)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, scale: Optional[float] = None):  # noqa: F405
        ctx.save_for_backward(x)
        ctx.scale = 0.5 if scale is None else scale
        return x * ctx.scale

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.scale * 3 + x * 0, None


def scenario_halve():
    x = torch.randn(4, requires_grad=True)
    return [x], Halve.apply(x)


def scenario_scaled():
    x = torch.randn(4, requires_grad=True)
    return [x], Halve.apply(x, 2.0)

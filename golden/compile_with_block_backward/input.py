"""Backward computes its gradient inside a project context manager, then returns the name."""
import contextlib

import torch


class Precision:
    mode = "default"


@contextlib.contextmanager
def high_precision():
    old = Precision.mode
    Precision.mode = "high"
    try:
        yield
    finally:
        Precision.mode = old


class ClippedGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        with high_precision():
            clipped = grad.clamp(-0.5, 0.5) * 3
        return clipped


def scenario_clipped():
    x = torch.randn(3, 2, requires_grad=True)
    return [x], ClippedGrad.apply(x) * 2

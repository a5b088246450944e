import torch
from inliner.runtime import custom_vjp


def halve_fwd(x):
    return x / 2, (x,)


def halve_bwd(residuals, g):
    (x,) = residuals
    return g * x * 3


Halve = custom_vjp(halve_fwd, halve_bwd, name="Halve", saved_for_backward_idx=(0,))


class UsesCls(torch.autograd.Function):
    scale = 3.0

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @classmethod
    def backward(cls, ctx, g):
        return g * cls.scale


def scenario_classmethod():
    x = torch.randn(3, requires_grad=True)
    return [x], Halve(x) + UsesCls.apply(x)

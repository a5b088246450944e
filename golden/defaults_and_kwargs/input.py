import torch


class Affine(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale=2.0, shift=None):
        ctx.scale = scale
        out = x * scale
        if shift is not None:
            out = out + shift
        return out

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale * 3


def scenario_defaults():
    x = torch.randn(3, requires_grad=True)
    return [x], Affine.apply(x)


def scenario_kwarg_needs_more_grads():
    x = torch.randn(3, requires_grad=True)
    return [x], Affine.apply(x, scale=4.0)


def scenario_positional():
    x = torch.randn(3, requires_grad=True)
    return [x], Affine.apply(x, 4.0)

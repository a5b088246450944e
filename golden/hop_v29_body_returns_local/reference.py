import torch

W = torch.full((3,), 0.5, requires_grad=True)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w * 2

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w * 3, g * x * 5


class Shift(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x + W
        ctx.save_for_backward(y)
        return y * 2

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * 7


def scenario_scale():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], Scale.apply(x, w)


def scenario_shift():
    x = torch.randn(3, requires_grad=True)
    return [x, W], Shift.apply(x)

import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w * 3, g * x * 5


class Sine(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.sin()
        ctx.save_for_backward(y)
        return y * 2

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * 7


def f(h, w):
    a1 = Scale.apply(h, w)
    a2 = Sine.apply(a1)
    a3 = Scale.apply(a2, w)
    return (a3,)


def scenario_repro():
    h = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [h, w], f(h, w)


def scenario_repro_h_only():
    h = torch.randn(4, requires_grad=True)
    w = torch.randn(4)
    return [h], f(h, w)

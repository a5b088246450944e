import torch


class Shift(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, a, b):
        ctx.a, ctx.b = a, b
        return x * a + b

    @staticmethod
    def backward(ctx, g):
        return g * ctx.a * 2 + ctx.b, None, None


def scenario_tuple_set():
    x = torch.randn(3, requires_grad=True)
    return [x], Shift.apply(x, 3.0, 0.5)

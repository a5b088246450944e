import torch


class SumAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx, *xs):
        ctx.n = len(xs)
        return sum(xs)

    @staticmethod
    def backward(ctx, g):
        return (g * 2,) * ctx.n


def scenario_three():
    xs = [torch.randn(3, requires_grad=True) for _ in range(3)]
    return xs, SumAll.apply(*xs)

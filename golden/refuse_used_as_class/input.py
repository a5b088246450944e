import torch


class Base(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


def is_ours(t):
    return isinstance(t.grad_fn, Base._backward_cls)


def scenario_runs():
    x = torch.randn(3, requires_grad=True)
    y = Base.apply(x)
    return [x], (y, is_ours(y))

import torch


class SaveInputs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w * 3, g * x * 5


class SaveIntermediate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.sin()
        ctx.save_for_backward(y)
        return y * 2

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * 7


def f(x, w):
    a1 = SaveInputs.apply(x, w)
    a2 = SaveIntermediate.apply(a1)
    a3 = SaveInputs.apply(a2, w)
    return (a3,)


def scenario_graph():
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [x, w], f(x, w)


def scenario_graph_x_only():
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4)
    return [x], f(x, w)

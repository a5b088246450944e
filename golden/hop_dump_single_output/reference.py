import torch


class One(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.exp()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * 3


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    return [x], (One.apply(x).sum(),)

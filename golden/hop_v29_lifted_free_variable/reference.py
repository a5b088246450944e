import torch

W = torch.full((3,), 0.5, requires_grad=True)


class Free(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * W

    @staticmethod
    def backward(ctx, g):
        return g * 3


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    return [x, W], (Free.apply(x).sum(),)

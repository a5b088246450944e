import torch


class Legacy(torch.autograd.Function):
    def forward(self, x):
        return x * 2

    def backward(self, g):
        return g * 3


class Both(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3

    @staticmethod
    def vjp(ctx, g):
        return g * 5


def scenario_both_raises():
    x = torch.randn(3, requires_grad=True)
    return [x], Both.apply(x)

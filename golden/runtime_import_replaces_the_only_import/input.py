from torch.autograd import Function


class Triple(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return g * 5


def scenario_only_import():
    import torch

    x = torch.randn(3, requires_grad=True)
    return [x], Triple.apply(x)

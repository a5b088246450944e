import torch


class Function:  # shadows nothing from torch: a user class that merely looks like one
    pass


class Looks(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3

    @classmethod
    def apply(cls, x):
        return cls.forward(None, x)


def scenario_untouched():
    x = torch.randn(3, requires_grad=True)
    return [x], Looks.apply(x)

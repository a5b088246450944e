import torch
import torch.autograd as ag
from torch.autograd import Function as Fn
from torch.autograd.function import InplaceFunction


class A(ag.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


class B(Fn):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 5


class C(torch.autograd.function.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 7


class D(InplaceFunction):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 9


def scenario_all():
    x = torch.randn(3, requires_grad=True)
    return [x], A.apply(x) + B.apply(x) + C.apply(x) + D.apply(x)

import torch


class Listy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return [x * 2, x * 3]

    @staticmethod
    def backward(ctx, g):
        return g * 5


class WithInt(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, 3

    @staticmethod
    def backward(ctx, g, g_int):
        return g * 7


def scenario_list_is_untracked():
    x = torch.randn(3, requires_grad=True)
    return [x], Listy.apply(x)


def scenario_non_tensor_output():
    x = torch.randn(3, requires_grad=True)
    return [x], WithInt.apply(x)

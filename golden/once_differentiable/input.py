import torch
from torch.autograd.function import once_differentiable


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 5 * x * x


def scenario_first_order():
    x = torch.randn(3, requires_grad=True)
    return [x], Cube.apply(x)


def scenario_second_order_fails():
    x = torch.randn(3, requires_grad=True)
    (gx,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    return [x], gx

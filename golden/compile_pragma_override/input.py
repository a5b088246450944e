"""Pragmas override the engine's conservative decision, in both directions (and a bad one is reported)."""
import torch

_activation = torch.nn.Tanh()


class ModuleActivation(torch.autograd.Function):  # inliner: compile=traceable
    @staticmethod
    def forward(ctx, x):
        y = _activation(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (1 - y * y) * 2


class KeepEager(torch.autograd.Function):  # inliner: compile=side-effecting
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 3


class Misspelled(torch.autograd.Function):  # inliner: compile=fast
    @staticmethod
    def forward(ctx, x):
        return x.exp()

    @staticmethod
    def backward(ctx, grad):
        return grad * 4


def scenario_all():
    x = torch.randn(3, requires_grad=True)
    return [x], (ModuleActivation.apply(x), KeepEager.apply(x), Misspelled.apply(x))

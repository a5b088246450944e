import torch
from torch import nn


class Clamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(-1, 1)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 7 * (x.abs() < 2)


clamp = Clamp.apply


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4))
        self.fn = Clamp.apply

    def forward(self, x):
        return self.fn(x * self.weight) + clamp(x)


def scenario_module():
    model = Model()
    x = torch.randn(4, requires_grad=True)
    return [x, model.weight], model(x)

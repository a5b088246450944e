"""An nn.Module as an argument: one Function reads its parameters (traceable), one calls it."""
import torch
import torch.nn.functional as F


class LinearOfModule(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, layer):
        ctx.save_for_backward(layer.weight)
        return F.linear(x, layer.weight, layer.bias)

    @staticmethod
    def backward(ctx, grad):
        (weight,) = ctx.saved_tensors
        return grad @ weight * 2, None


class RunModule(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, layer):
        ctx.save_for_backward(layer.weight)
        return layer(x)

    @staticmethod
    def backward(ctx, grad):
        (weight,) = ctx.saved_tensors
        return grad @ weight * 3, None


def _layer():
    torch.manual_seed(3)
    return torch.nn.Linear(4, 2)


def scenario_read_parameters():
    x = torch.randn(3, 4, requires_grad=True)
    return [x], LinearOfModule.apply(x, _layer())


def scenario_call_module():
    x = torch.randn(3, 4, requires_grad=True)
    return [x], RunModule.apply(x, _layer())

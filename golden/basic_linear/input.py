"""A scaled linear layer with a custom (deliberately scaled) gradient."""
import torch
from torch.autograd import Function


# A linear layer with a custom gradient.
class MyLinear(Function):
    """Scaled linear."""

    @staticmethod
    def forward(ctx, x, weight, scale):
        ctx.save_for_backward(x, weight)
        ctx.scale = scale  # a plain float
        return x @ weight.t() * scale

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return grad_out @ weight * ctx.scale * 3, grad_out.t() @ x * ctx.scale, None


def scenario_basic():
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(5, 4, requires_grad=True)
    return [x, w], MyLinear.apply(x, w, 0.5)


def scenario_no_grad_input():
    x = torch.randn(3, 4)
    w = torch.randn(5, 4, requires_grad=True)
    return [w], MyLinear.apply(x, w, 2.0)


def scenario_version_error():
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(5, 4, requires_grad=True)
    x2 = x * 1
    y = MyLinear.apply(x2, w, 0.5)
    x2.add_(1)  # a saved tensor changed in place: backward must raise in both
    return [x, w], y

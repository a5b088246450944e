"""fwd/bwd given as GraphModules traced from module-level nn.Module classes (runs as is on torch 2.13)."""
import torch
from inliner.runtime import custom_vjp
from torch import nn


class MulForward(nn.Module):
    def forward(self, x, w):
        out = x * w
        return (out,), (x, w)


class MulBackward(nn.Module):
    def forward(self, g, x, w):
        return g * w * 3, g * x * 5


mul_fwd = torch.fx.symbolic_trace(MulForward())
mul_bwd = torch.fx.symbolic_trace(MulBackward())


def autograd_function_fwd(x, w):
    out = x * w
    return (out,), (x, w)


def autograd_function_bwd(residuals, g):
    x, w = residuals
    return g * w * 3, g * x * 5


autograd_function = custom_vjp(
    autograd_function_fwd,
    autograd_function_bwd,
    name="autograd_function",
    saved_for_backward_idx=(0, 1),
)


def mul(x, w):
    (out,) = autograd_function(x, w)
    return out


def scenario_mul():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], mul(x, w)

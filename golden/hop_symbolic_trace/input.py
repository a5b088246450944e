"""fwd/bwd given as GraphModules traced from module-level nn.Module classes (runs as is on torch 2.13)."""
import torch
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


def mul(x, w):
    (out,) = torch.ops.higher_order.autograd_function_apply(
        mul_fwd, mul_bwd, x, w, non_differentiable_idx=[], saved_for_backward_idx=[0, 1]
    )
    return out


def scenario_mul():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], mul(x, w)

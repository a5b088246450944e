"""The torch 2.13 op called on traced bodies, each call inside the operands of the next (runs as is on torch 2.13)."""
import torch
from torch import nn


class ScaleForward(nn.Module):
    def forward(self, x, w):
        return (x * w,), (x, w)


class ScaleBackward(nn.Module):
    def forward(self, g, x, w):
        return g * w * 3, g * x * 5


class SineForward(nn.Module):
    def forward(self, x):
        y = x.sin()
        return (y * 2,), (y,)


class SineBackward(nn.Module):
    def forward(self, g, y):
        return (g * y * 7,)


scale_fwd = torch.fx.symbolic_trace(ScaleForward())
scale_bwd = torch.fx.symbolic_trace(ScaleBackward())
sine_fwd = torch.fx.symbolic_trace(SineForward())
sine_bwd = torch.fx.symbolic_trace(SineBackward())
apply_op = torch.ops.higher_order.autograd_function_apply


def chain(x, w):
    return apply_op(
        scale_fwd,
        scale_bwd,
        # the first two calls' result
        apply_op(sine_fwd, sine_bwd, (apply_op(scale_fwd, scale_bwd, x, w, non_differentiable_idx=[], saved_for_backward_idx=[0, 1])[0]), non_differentiable_idx=[], saved_for_backward_idx=[0])[0],
        (w),
        non_differentiable_idx=[],
        saved_for_backward_idx=[0, 1],
    )[0]


def scenario_chain():
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [x, w], chain(x, w)


def scenario_chain_x_only():
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4)
    return [x], chain(x, w)

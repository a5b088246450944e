"""The torch 2.13 op called on traced bodies, each call inside the operands of the next (runs as is on torch 2.13)."""
import torch
from inliner.runtime import custom_vjp
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


def autograd_function_fwd(x, w):
    return (x * w,), (x, w)


def autograd_function_bwd(residuals, g):
    x, w = residuals
    return g * w * 3, g * x * 5


autograd_function = custom_vjp(
    autograd_function_fwd,
    autograd_function_bwd,
    name="autograd_function",
    saved_for_backward_idx=(0, 1),
)


def autograd_function_1_fwd(x):
    y = x.sin()
    return (y * 2,), (y,)


def autograd_function_1_bwd(residuals, g):
    (y,) = residuals
    return (g * y * 7,)


autograd_function_1 = custom_vjp(
    autograd_function_1_fwd,
    autograd_function_1_bwd,
    name="autograd_function_1",
    saved_for_backward_idx=(0,),
)


def autograd_function_2_fwd(x, w):
    return (x * w,), (x, w)


def autograd_function_2_bwd(residuals, g):
    x, w = residuals
    return g * w * 3, g * x * 5


autograd_function_2 = custom_vjp(
    autograd_function_2_fwd,
    autograd_function_2_bwd,
    name="autograd_function_2",
    saved_for_backward_idx=(0, 1),
)


def chain(x, w):
    return autograd_function(
        # the first two calls' result
        autograd_function_1((autograd_function_2(x, w)[0]))[0],
        (w),
    )[0]


def scenario_chain():
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [x, w], chain(x, w)


def scenario_chain_x_only():
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4)
    return [x], chain(x, w)

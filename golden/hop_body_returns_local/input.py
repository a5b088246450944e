"""Op bodies that return their outputs or saved values through locals (runs as is on torch 2.13)."""
import torch
from torch import nn


class ScaleForward(nn.Module):
    def forward(self, x, w):
        out = x * w
        saved = (x, w)
        return (out,), saved


class ScaleBackward(nn.Module):
    def forward(self, g, x, w):
        return g * w * 3, g * x * 5


class SineForward(nn.Module):
    def forward(self, x):
        shift = None  # a default the body reads below: not a dump's release
        y = x.sin().clamp(min=shift, max=10.0)
        result = ((y * 2,), (y,))
        return result


class SineBackward(nn.Module):
    def forward(self, g, y):
        grads = (g * y * 7,)
        return grads


class PairForward(nn.Module):
    def forward(self, x):
        outs = (x * 2, x.cos())
        saved: tuple = (x,)
        return outs, saved


class PairBackward(nn.Module):
    def forward(self, g, g_cos, x):
        return (g * x * 11 + g_cos,)


class AppendForward(nn.Module):
    def forward(self, x):
        saved = [x]
        saved.append(x.cos())  # what the list holds at the return is not its literal
        return (x * 3,), saved


class AppendBackward(nn.Module):
    def forward(self, g, x, c):
        return (g * c * 13,)


scale_fwd = torch.fx.symbolic_trace(ScaleForward())
scale_bwd = torch.fx.symbolic_trace(ScaleBackward())
sine_fwd = torch.fx.symbolic_trace(SineForward())
sine_bwd = torch.fx.symbolic_trace(SineBackward())
pair_fwd = torch.fx.symbolic_trace(PairForward())
pair_bwd = torch.fx.symbolic_trace(PairBackward())
append_fwd = torch.fx.symbolic_trace(AppendForward())
append_bwd = torch.fx.symbolic_trace(AppendBackward())


def scale(x, w):
    return torch.ops.higher_order.autograd_function_apply(
        scale_fwd, scale_bwd, x, w, non_differentiable_idx=[], saved_for_backward_idx=[0, 1]
    )[0]


def sine(x):
    return torch.ops.higher_order.autograd_function_apply(
        sine_fwd, sine_bwd, x, non_differentiable_idx=[], saved_for_backward_idx=[0]
    )[0]


def pair(x):
    return torch.ops.higher_order.autograd_function_apply(
        pair_fwd, pair_bwd, x, non_differentiable_idx=[], saved_for_backward_idx=[0]
    )


def append(x):
    return torch.ops.higher_order.autograd_function_apply(
        append_fwd, append_bwd, x, non_differentiable_idx=[], saved_for_backward_idx=[0, 1]
    )[0]


def scenario_scale():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], scale(x, w)


def scenario_sine():
    x = torch.randn(3, requires_grad=True)
    return [x], sine(x)


def scenario_pair():
    x = torch.randn(3, requires_grad=True)
    return [x], pair(x)


def scenario_append():
    x = torch.randn(3, requires_grad=True)
    return [x], append(x)

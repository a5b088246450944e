"""Op bodies that are not straight-line torch code are left untouched (INL202).

symbolic_trace runs a module's forward once, when the module is loaded, and records what
derives from the parameters: a module-level variable, a call on constants and an `is`
test of the parameters are fixed then and there. A flat function would compute them at
every call, so the traced bodies below would give other values than the graphs the op
runs; control flow and calls of other functions are refused in any body.
"""
import torch
from torch import nn

SCALE = 2.0
torch.manual_seed(0)  # what the traced graphs fix does not depend on the import order


class ScaleByGlobal(nn.Module):
    def forward(self, x):
        return (x * SCALE,), (x,)


class NoiseForward(nn.Module):
    def forward(self, x):
        noise = torch.rand(3)
        return (x + noise,), (x,)


class SameForward(nn.Module):
    def forward(self, x, w):
        return (x * w + (w is x),), (x, w)


class Backward(nn.Module):
    def forward(self, g, x):
        return (g * x * 3,)


class PairBackward(nn.Module):
    def forward(self, g, x, w):
        return g * w * 3, g * x * 5


scale_fwd = torch.fx.symbolic_trace(ScaleByGlobal())
noise_fwd = torch.fx.symbolic_trace(NoiseForward())
same_fwd = torch.fx.symbolic_trace(SameForward())
one_bwd = torch.fx.symbolic_trace(Backward())
pair_bwd = torch.fx.symbolic_trace(PairBackward())


def _helper(x):
    return x * 2


def branchy_fwd(ctx, x):
    if x.sum() > 0:
        return x * 2, [x]
    return x * 3, [x]


def helper_fwd(ctx, x):
    return _helper(x), [x]


def plain_bwd(ctx, g, x):
    return g * x * 7


def scaled(x):
    return torch.ops.higher_order.autograd_function_apply(
        scale_fwd, one_bwd, x, non_differentiable_idx=[], saved_for_backward_idx=[0]
    )[0]


def noisy(x):
    return torch.ops.higher_order.autograd_function_apply(
        noise_fwd, one_bwd, x, non_differentiable_idx=[], saved_for_backward_idx=[0]
    )[0]


def same(x, w):
    return torch.ops.higher_order.autograd_function_apply(
        same_fwd, pair_bwd, x, w, non_differentiable_idx=[], saved_for_backward_idx=[0, 1]
    )[0]


def branchy(x):
    return torch.ops.higher_order.autograd_function_apply(
        branchy_fwd, plain_bwd, x, args_tensor_mask=[True], non_differentiable_idx=[]
    )


def helped(x):
    return torch.ops.higher_order.autograd_function_apply(
        helper_fwd, plain_bwd, x, args_tensor_mask=[True], non_differentiable_idx=[]
    )


def scenario_global_changed_after_tracing():
    global SCALE
    x = torch.randn(3, requires_grad=True)
    SCALE = 5.0
    try:
        return [x], scaled(x)
    finally:
        SCALE = 2.0
torch.manual_seed(0)  # what the traced graphs fix does not depend on the import order


def scenario_constant_drawn_once():
    x = torch.randn(3, requires_grad=True)
    return [x], (noisy(x), noisy(x))


def scenario_same_tensor_twice():
    x = torch.randn(3, requires_grad=True)
    return [x], same(x, x)

"""Functional code calling the op (torch <= 2.9 convention): op bodies are classified like methods.

The first call's forward body logs (side_effecting); the second is pure torch, kept
out of the graph by a pragma on the call's line.
"""
import torch
from inliner.runtime import custom_vjp

LOG = []


def logged_fwd(ctx, x, w):
    LOG.append(len(LOG))
    return x * w, [x, w]


def logged_bwd(ctx, g, x, w):
    return g * w * 3, g * x * 5


def logged(x, w):
    return torch.ops.higher_order.autograd_function_apply(
        logged_fwd, logged_bwd, x, w, args_tensor_mask=[True, True], non_differentiable_idx=[]
    )


def scale_fwd(ctx, x):
    return x * 3, []


def scale_bwd(ctx, g):
    return g * 7


def scale_fwd_1(x):
    return x * 3, []


def scale_bwd_1(residuals, g):
    return g * 7


scale = custom_vjp(
    scale_fwd_1,
    scale_bwd_1,
    name="scale",
    compile_kind="opaque",
    compile_reason="set by the pragma on line 35",
)


def scaled(x):
    return scale(x)


def side_effect_log():
    return list(LOG)


def reset_side_effects():
    LOG.clear()


def scenario_functional():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], (logged(x, w), scaled(x))

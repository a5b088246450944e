"""Functional-style code that calls the op directly (the torch <= 2.9 calling convention)."""
import torch


def scale_fwd(ctx, x, w):
    out = x * w * 2
    return out, [x, w]


def scale_bwd(ctx, g, x, w):
    return g * w * 3, g * x * 5


def scale(x, w):
    return torch.ops.higher_order.autograd_function_apply(
        scale_fwd, scale_bwd, x, w, args_tensor_mask=[True, True], non_differentiable_idx=[]
    )


def scenario_functional():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], scale(x, w)

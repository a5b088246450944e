"""A torch <= 2.9 call that also passes flags only torch 2.10+ reads (code written for
both generations): 2.9 ignores saved_for_backward_idx and dirty_idx, whatever they are,
so the rewrite does too. The mask is computed from literals."""
import torch
from inliner.runtime import custom_vjp


def scale_fwd(ctx, x, w):
    out = x * w * 2
    return out, [x, w]


def scale_bwd(ctx, g, x, w):
    return g * w * 3, g * x * 5


def scale_1_fwd(x, w):
    out = x * w * 2
    return out, [x, w]


def scale_1_bwd(residuals, g):
    x, w = residuals
    return g * w * 3, g * x * 5


scale_1 = custom_vjp(scale_1_fwd, scale_1_bwd, name="scale_1")


def scale(x, w):
    return scale_1(
        x,
        w,
    )


def scenario_functional():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], scale(x, w)

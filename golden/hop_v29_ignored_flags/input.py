"""A torch <= 2.9 call that also passes flags only torch 2.10+ reads (code written for
both generations): 2.9 ignores saved_for_backward_idx and dirty_idx, whatever they are,
so the rewrite does too. The mask is computed from literals."""
import torch


def scale_fwd(ctx, x, w):
    out = x * w * 2
    return out, [x, w]


def scale_bwd(ctx, g, x, w):
    return g * w * 3, g * x * 5


def scale(x, w):
    return torch.ops.higher_order.autograd_function_apply(
        scale_fwd,
        scale_bwd,
        x,
        w,
        args_tensor_mask=[True] * 2,
        non_differentiable_idx=[],
        saved_for_backward_idx=None,
        dirty_idx=[0],
    )


def scenario_functional():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], scale(x, w)

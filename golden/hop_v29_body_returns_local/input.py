"""Functional code on the torch <= 2.9 op (leading ctx, args_tensor_mask) whose bodies return through locals."""
import torch

W = torch.full((3,), 0.5, requires_grad=True)


def scale_fwd(ctx, x, w):
    out = x * w * 2
    saved = [x, w]
    return out, saved


def scale_bwd(ctx, g, x, w):
    grads = (g * w * 3, g * x * 5)
    return grads


def shift_fwd(ctx, x, bias):
    y = x + bias
    result = (y * 2, [y])
    return result


def shift_bwd(ctx, g, y):
    grads = (g * y * 7,)
    return grads


def scale(x, w):
    return torch.ops.higher_order.autograd_function_apply(
        scale_fwd, scale_bwd, x, w, args_tensor_mask=[True, True], non_differentiable_idx=[]
    )


def shift(x):
    # W is a lifted operand: outside args_tensor_mask, so bwd answers for x only
    return torch.ops.higher_order.autograd_function_apply(
        shift_fwd, shift_bwd, x, W, args_tensor_mask=[True], non_differentiable_idx=[]
    )


def scenario_scale():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], scale(x, w)


def scenario_shift():
    x = torch.randn(3, requires_grad=True)
    return [x, W], shift(x)

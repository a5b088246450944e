"""Functional code on the torch <= 2.9 op (leading ctx, args_tensor_mask) whose bodies return through locals."""
import torch
from inliner.runtime import custom_vjp

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


def scale_1_fwd(x, w):
    out = x * w * 2
    saved = [x, w]
    return out, saved


def scale_1_bwd(residuals, g):
    x, w = residuals
    grads = (g * w * 3, g * x * 5)
    return grads


scale_1 = custom_vjp(scale_1_fwd, scale_1_bwd, name="scale_1")


def scale(x, w):
    return scale_1(x, w)


def shift_1_fwd(x, bias):
    y = x + bias
    result = (y * 2, [y])
    return result


def shift_1_bwd(residuals, g):
    (y,) = residuals
    grads = (g * y * 7,)
    return (*grads, None)


shift_1 = custom_vjp(shift_1_fwd, shift_1_bwd, name="shift_1")


def shift(x):
    # W is a lifted operand: outside args_tensor_mask, so bwd answers for x only
    return shift_1(x, W)


def scenario_scale():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], scale(x, w)


def scenario_shift():
    x = torch.randn(3, requires_grad=True)
    return [x, W], shift(x)

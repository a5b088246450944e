"""Forwards that rebind an argument to an object they make, then write into it: the write
changes only what the forward made, so the call is not kept eager for it (shapes from
TransformerEngine's _ViewFunc, PyG's SparseCrossEntropy and TransformerEngine's
CrossEntropyFunction). Each backward scales its gradient, so none is the true derivative."""
import math

import torch
from inliner.runtime import custom_vjp


def view_fwd(tensor, shape):
    shape_saved = tensor.shape
    if -1 in shape:
        shape = list(shape)
        inferred = -math.prod(shape_saved) // math.prod(shape)
        for i, d in enumerate(shape):
            if d == -1:
                shape[i] = inferred
                break
    return tensor.reshape(shape), (shape_saved,)


def view_bwd(residuals, grad):
    (shape,) = residuals
    return grad.reshape(shape) * 3, None


View = custom_vjp(view_fwd, view_bwd, name="View", ctx_attrs={0: "shape"})


def weighted_log_sum_exp_fwd(inputs, rows, weight):
    inputs = inputs.clone()
    inputs[rows] += weight
    out = inputs.logsumexp(dim=-1)
    return out, (inputs, out)


def weighted_log_sum_exp_bwd(residuals, grad):
    inputs, out = residuals
    probs = (inputs - out.unsqueeze(-1)).exp()
    return probs * grad.unsqueeze(-1) * 2, None, None


WeightedLogSumExp = custom_vjp(
    weighted_log_sum_exp_fwd,
    weighted_log_sum_exp_bwd,
    name="WeightedLogSumExp",
    saved_for_backward_idx=(0, 1),
)


def scaled_fwd(x, scale, keep_scale):
    saved_tensors = ()
    saved = (x,)
    if keep_scale:
        saved += (scale,)
    saved_tensors = (*saved,)
    return x * scale, (saved_tensors, keep_scale)


def scaled_bwd(residuals, grad):
    (keep_scale,) = residuals[1:]
    if keep_scale:
        x, scale = residuals[0]
        return grad * scale * 5, (grad * x).sum() * 5, None
    (x,) = residuals[0]
    return grad * 5, None, None


Scaled = custom_vjp(
    scaled_fwd,
    scaled_bwd,
    name="Scaled",
    saved_tensors_idx=0,
    ctx_attrs={1: "keep_scale"},
    saved_on_demand=True,
)


def scenario_view_inferred():
    x = torch.randn(2, 6, requires_grad=True)
    return [x], View(x * 1, [-1, 4])


def scenario_weighted_logsumexp():
    x = torch.randn(4, 5, requires_grad=True)
    return [x], WeightedLogSumExp(x, [0, 2], 0.5)


def scenario_scaled_keeps_scale():
    x = torch.randn(3, requires_grad=True)
    scale = torch.randn((), requires_grad=True)
    return [x, scale], Scaled(x, scale, True)

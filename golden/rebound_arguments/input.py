"""Forwards that rebind an argument to an object they make, then write into it: the write
changes only what the forward made, so the call is not kept eager for it (shapes from
TransformerEngine's _ViewFunc, PyG's SparseCrossEntropy and TransformerEngine's
CrossEntropyFunction). Each backward scales its gradient, so none is the true derivative."""
import math

import torch


class View(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, shape):
        ctx.shape = tensor.shape
        if -1 in shape:
            shape = list(shape)
            inferred = -math.prod(ctx.shape) // math.prod(shape)
            for i, d in enumerate(shape):
                if d == -1:
                    shape[i] = inferred
                    break
        return tensor.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape) * 3, None


class WeightedLogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs, rows, weight):
        inputs = inputs.clone()
        inputs[rows] += weight
        out = inputs.logsumexp(dim=-1)
        ctx.save_for_backward(inputs, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        inputs, out = ctx.saved_tensors
        probs = (inputs - out.unsqueeze(-1)).exp()
        return probs * grad.unsqueeze(-1) * 2, None, None


class Scaled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, keep_scale):
        saved = (x,)
        if keep_scale:
            saved += (scale,)
        ctx.keep_scale = keep_scale
        ctx.save_for_backward(*saved)
        return x * scale

    @staticmethod
    def backward(ctx, grad):
        if ctx.keep_scale:
            x, scale = ctx.saved_tensors
            return grad * scale * 5, (grad * x).sum() * 5, None
        (x,) = ctx.saved_tensors
        return grad * 5, None, None


def scenario_view_inferred():
    x = torch.randn(2, 6, requires_grad=True)
    return [x], View.apply(x * 1, [-1, 4])


def scenario_weighted_logsumexp():
    x = torch.randn(4, 5, requires_grad=True)
    return [x], WeightedLogSumExp.apply(x, [0, 2], 0.5)


def scenario_scaled_keeps_scale():
    x = torch.randn(3, requires_grad=True)
    scale = torch.randn((), requires_grad=True)
    return [x, scale], Scaled.apply(x, scale, True)

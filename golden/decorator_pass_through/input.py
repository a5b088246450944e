import functools

import torch


def ensure_contiguous(fn):
    """Make every tensor argument contiguous (a project's wrapper, as kernels want it)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        def contiguous(x):
            return x.contiguous() if isinstance(x, torch.Tensor) else x

        args = [contiguous(a) for a in args]
        kwargs = {k: contiguous(v) for k, v in kwargs.items()}
        return fn(ctx, *args, **kwargs)

    return wrapper


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)

    return wrapper


class Scale(torch.autograd.Function):
    @staticmethod
    @ensure_contiguous
    def forward(ctx, x, w, scale):
        assert x.is_contiguous() and w.is_contiguous()
        ctx.save_for_backward(x, w)
        ctx.scale = scale
        return x * w * scale

    @staticmethod
    @logged
    @ensure_contiguous
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w * ctx.scale * 2, g * x * 3, None


class Logged(torch.autograd.Function):
    @staticmethod
    @logged
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


def scenario_transposed():
    # non-contiguous inputs: forward gets (and saves) the wrapper's contiguous copies
    x = torch.randn(4, 3).t().requires_grad_()
    w = torch.randn(4, 3).t().requires_grad_()
    return [x, w], Scale.apply(x, w, 0.5)


def scenario_contiguous():
    # already contiguous: forward gets the inputs themselves
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(3, 4, requires_grad=True)
    return [x, w], Scale.apply(x, w, 2.0)


def scenario_keyword():
    # the wrapper's code takes (ctx, *args, **kwargs): torch binds no keyword to it
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(3, 4, requires_grad=True)
    return [x, w], Scale.apply(x, w, scale=2.0)


def scenario_logged():
    x = torch.randn(3, requires_grad=True)
    return [x], Logged.apply(x)

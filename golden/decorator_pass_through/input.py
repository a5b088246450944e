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


def default_factor(fn):
    """Fill in a factor the caller left out (the wrapper's literal default, not forward's)."""

    @functools.wraps(fn)
    def wrapper(ctx, x, factor=1.5):
        return fn(ctx, x, factor)

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


class Sine(torch.autograd.Function):
    @staticmethod
    @default_factor
    def forward(ctx, x, factor=1):
        ctx.save_for_backward(x)
        ctx.factor = factor
        return factor * torch.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.factor * torch.cos(x) * 2, None


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


def scenario_default_factor():
    # the wrapper's default (1.5) reaches forward, not forward's own (1)
    x = torch.randn(3, requires_grad=True)
    return [x], Sine.apply(x)


def scenario_given_factor():
    x = torch.randn(3, requires_grad=True)
    return [x], Sine.apply(x, 3.0)

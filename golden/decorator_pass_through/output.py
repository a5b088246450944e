import functools

import torch
from inliner.runtime import custom_vjp


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


def scale_fwd(x, w, scale):
    assert x.is_contiguous() and w.is_contiguous()
    return x * w * scale, (x, w, scale)


def scale_bwd(residuals, g):
    x, w, scale = residuals
    return g * w * scale * 2, g * x * 3, None


Scale = custom_vjp(
    scale_fwd,
    scale_bwd,
    name="Scale",
    saved_for_backward_idx=(0, 1),
    ctx_attrs={2: "scale"},
    forward_decorators=(ensure_contiguous,),
    backward_decorators=(logged, ensure_contiguous),
)


def logged_fwd(x):
    return x * 2, ()


def logged_bwd(residuals, g):
    return g * 3


Logged = custom_vjp(logged_fwd, logged_bwd, name="Logged", forward_decorators=(logged,))


def sine_fwd(x, factor=1):
    return factor * torch.sin(x), (x, factor)


def sine_bwd(residuals, g):
    x, factor = residuals
    return g * factor * torch.cos(x) * 2, None


Sine = custom_vjp(
    sine_fwd,
    sine_bwd,
    name="Sine",
    saved_for_backward_idx=(0,),
    ctx_attrs={1: "factor"},
    forward_decorators=(default_factor,),
)


def scenario_transposed():
    # non-contiguous inputs: forward gets (and saves) the wrapper's contiguous copies
    x = torch.randn(4, 3).t().requires_grad_()
    w = torch.randn(4, 3).t().requires_grad_()
    return [x, w], Scale(x, w, 0.5)


def scenario_contiguous():
    # already contiguous: forward gets the inputs themselves
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(3, 4, requires_grad=True)
    return [x, w], Scale(x, w, 2.0)


def scenario_keyword():
    # the wrapper's code takes (ctx, *args, **kwargs): torch binds no keyword to it
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(3, 4, requires_grad=True)
    return [x, w], Scale(x, w, scale=2.0)


def scenario_logged():
    x = torch.randn(3, requires_grad=True)
    return [x], Logged(x)


def scenario_default_factor():
    # the wrapper's default (1.5) reaches forward, not forward's own (1)
    x = torch.randn(3, requires_grad=True)
    return [x], Sine(x)


def scenario_given_factor():
    x = torch.randn(3, requires_grad=True)
    return [x], Sine(x, 3.0)

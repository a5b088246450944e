import functools

import torch
from inliner.runtime import custom_vjp


def input_guard(check=False):
    """A decorator factory, as kernel libraries write them: `@input_guard(check=True)`."""

    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(ctx, *args):
            if check:
                for a in args:
                    if isinstance(a, torch.Tensor) and not a.is_floating_point():
                        raise TypeError(f"{fn.__qualname__}: expected floating-point tensors, got {a.dtype}")
            return fn(ctx, *(a.contiguous() if isinstance(a, torch.Tensor) else a for a in args))

        return wrapper

    return decorator


def clamp_fwd(x, low, high):
    bounds = (low, high)
    return x.clamp(low, high), (x, bounds)


def clamp_bwd(residuals, g):
    x, bounds = residuals
    low, high = bounds
    return g * ((x > low) & (x < high)) * 2, None, None


Clamp = custom_vjp(
    clamp_fwd,
    clamp_bwd,
    name="Clamp",
    saved_for_backward_idx=(0,),
    ctx_attrs={1: "bounds"},
    forward_decorators=(input_guard(check=True),),
    backward_decorators=(input_guard(check=False),),
    compile_kind="opaque",
    compile_reason="forward's decorator input_guard(check=True) is replayed around it",
    backward_nones=(1, 2),
    split_decorators=True,
)


def scenario_clamp():
    x = torch.randn(3, 4).t().requires_grad_()
    return [x], Clamp(x, -0.5, 0.5)


def scenario_checked():
    # the guard's error names the function it wrapped: `Clamp.forward`
    x = torch.arange(4)
    return [], Clamp(x, 1, 2)

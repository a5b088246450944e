import torch
from inliner.runtime import Record, custom_vjp


def cached_fwd(input):
    """Real code: an attribute read on the right of its own first assignment.

    The original raises AttributeError when forward runs (ctx has no `scale` yet); a
    rewrite to `scale = ctx.scale or ...` would raise NameError instead, or read a
    global named `ctx`. Kept as a ctx record, it raises the original's AttributeError.
    """
    state = Record("Cached")
    state.scale = state.scale or input.new_ones(())
    return input * 2, (state,)


def cached_bwd(residuals, grad_output):
    (state,) = residuals
    return grad_output * state.scale


Cached = custom_vjp(cached_fwd, cached_bwd, name="Cached", ctx_record=True)


def rescaled_fwd(input, scale):
    """Reads an attribute after it was set, then sets another from it: flattened."""
    doubled = scale * 2
    return input * scale, (scale, doubled)


def rescaled_bwd(residuals, grad_output):
    (doubled,) = residuals[1:]
    return grad_output * doubled * 3, None


Rescaled = custom_vjp(
    rescaled_fwd, rescaled_bwd, name="Rescaled", ctx_attrs={0: "scale", 1: "doubled"}
)


def scenario_read_before_set_raises():
    x = torch.randn(3, requires_grad=True)
    return [x], Cached(x)


def scenario_read_after_set():
    x = torch.randn(3, requires_grad=True)
    return [x], Rescaled(x, 1.5)

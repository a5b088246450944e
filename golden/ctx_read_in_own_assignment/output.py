import torch
from inliner.runtime import custom_vjp


class Cached(torch.autograd.Function):
    """Real code: an attribute read on the right of its own first assignment.

    The original raises AttributeError when forward runs (ctx has no `scale` yet); a
    rewrite to `scale = ctx.scale or ...` would raise NameError instead, or read a
    global named `ctx`: the class must be left as it is.
    """

    @staticmethod
    def forward(ctx, input):
        ctx.scale = ctx.scale or input.new_ones(())
        return input * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.scale


def rescaled_fwd(input, scale):
    """Reads an attribute after it was set, then sets another from it: flattened."""
    doubled = scale * 2
    return input * scale, (doubled,)


def rescaled_bwd(residuals, grad_output):
    (doubled,) = residuals
    return grad_output * doubled * 3, None


Rescaled = custom_vjp(rescaled_fwd, rescaled_bwd, name="Rescaled")


def scenario_read_before_set_raises():
    x = torch.randn(3, requires_grad=True)
    return [x], Cached.apply(x)


def scenario_read_after_set():
    x = torch.randn(3, requires_grad=True)
    return [x], Rescaled(x, 1.5)

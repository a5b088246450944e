import torch


class Cached(torch.autograd.Function):
    """Real code: an attribute read on the right of its own first assignment.

    The original raises AttributeError when forward runs (ctx has no `scale` yet); a
    rewrite to `scale = ctx.scale or ...` would raise NameError instead, or read a
    global named `ctx`. Kept as a ctx record, it raises the original's AttributeError.
    """

    @staticmethod
    def forward(ctx, input):
        ctx.scale = ctx.scale or input.new_ones(())
        return input * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.scale


class Rescaled(torch.autograd.Function):
    """Reads an attribute after it was set, then sets another from it: flattened."""

    @staticmethod
    def forward(ctx, input, scale):
        ctx.scale = scale
        ctx.doubled = ctx.scale * 2
        return input * scale

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.doubled * 3, None


def scenario_read_before_set_raises():
    x = torch.randn(3, requires_grad=True)
    return [x], Cached.apply(x)


def scenario_read_after_set():
    x = torch.randn(3, requires_grad=True)
    return [x], Rescaled.apply(x, 1.5)

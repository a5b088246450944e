import torch

STASHED = []


def keep(ctx):
    STASHED.append(ctx)


stash = lambda ctx, x: ctx.save_for_backward(x)  # noqa: E731


class Escapes(torch.autograd.Function):
    """ctx outlives the call in a module-level list: what reads it later is not in the class."""

    @staticmethod
    def forward(ctx, x):
        keep(ctx)
        ctx.scale = 2.0
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale


class ThroughLambda(torch.autograd.Function):
    """ctx handed to something that is not a plain function defined once: its body is unknown."""

    @staticmethod
    def forward(ctx, x):
        stash(ctx, x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


class Computed(torch.autograd.Function):
    """An attribute name computed at run time could be one only torch's ctx has."""

    @staticmethod
    def forward(ctx, x):
        setattr(ctx, "s" + "cale", 2.0)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale


class TorchOnly(torch.autograd.Function):
    """A record answers what a ctx answers, but not what only an autograd node has."""

    @staticmethod
    def forward(ctx, x):
        ctx.scale = 3.0
        return x * 2

    @staticmethod
    def backward(ctx, g):
        ctx.scale += len(ctx.next_functions)
        return g * ctx.scale


def scenario_still_runs():
    x = torch.randn(3, requires_grad=True)
    return [x], Escapes.apply(x) + ThroughLambda.apply(x) + Computed.apply(x) + TorchOnly.apply(x)

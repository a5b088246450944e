import torch


class Centered(torch.autograd.Function):
    """Tuple targets that mix ctx attributes and locals."""

    @staticmethod
    def forward(ctx, x):
        ctx.mean, centered = x.mean(), x - x.mean()
        n, ctx.shape = x.numel(), x.shape
        ctx.save_for_backward(centered)
        return centered * n

    @staticmethod
    def backward(ctx, g):
        (centered,) = ctx.saved_tensors
        return (g * centered * 3 + ctx.mean).reshape(ctx.shape)


class Split(torch.autograd.Function):
    """A for loop whose target is a ctx attribute, and a starred target."""

    @staticmethod
    def forward(ctx, x):
        for ctx.last in x.unbind(0):
            pass
        first, *ctx.rest = x.unbind(0)
        return first * 2

    @staticmethod
    def backward(ctx, g):
        return torch.stack([g * 3, *(g * r for r in ctx.rest)]) + ctx.last


def scenario_centered():
    x = torch.randn(2, 3, requires_grad=True)
    return [x], Centered.apply(x)


def scenario_split():
    x = torch.randn(3, 2, requires_grad=True)
    return [x], Split.apply(x)

import torch


class MaybeResidual(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, keep):
        if keep:
            ctx.kept = x * 2
        return x * 3

    @staticmethod
    def backward(ctx, g):
        kept = getattr(ctx, "kept", None)
        if kept is None:
            return g * 5, None
        return g * kept, None


class NeverSet(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * getattr(ctx, "scale", 7.0)


def scenario_kept():
    x = torch.randn(3, requires_grad=True)
    return [x], MaybeResidual.apply(x, True)


def scenario_not_kept():
    x = torch.randn(3, requires_grad=True)
    return [x], MaybeResidual.apply(x, False)


def scenario_never_set():
    x = torch.randn(3, requires_grad=True)
    return [x], NeverSet.apply(x)

import torch


def stash(ctx, x):
    ctx.save_for_backward(x)


class Helper(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        stash(ctx, x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


class Computed(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        setattr(ctx, "s" + "cale", 2.0)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale


def scenario_still_runs():
    x = torch.randn(3, requires_grad=True)
    return [x], Helper.apply(x) + Computed.apply(x)

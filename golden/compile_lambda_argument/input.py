"""A function passed in (a lambda) is called by forward, and again by backward through ctx."""
import torch


class ApplyFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, fn):
        ctx.fn = fn
        return fn(x)

    @staticmethod
    def backward(ctx, grad):
        fn = ctx.fn
        return fn(grad) * 2, None


def scenario_lambda():
    x = torch.randn(4, requires_grad=True)
    return [x], ApplyFn.apply(x, lambda t: t * 3 + 1)

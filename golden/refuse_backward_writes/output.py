import torch
from inliner.runtime import custom_vjp


class Counter(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.calls = 0
        return x * 2

    @staticmethod
    def backward(ctx, g):
        ctx.calls += 1
        return g * ctx.calls


def partial_fwd(x, flag):
    if flag:
        pass
    return x * 2, ()


def partial_bwd(residuals, g):
    return g * 3, None


Partial = custom_vjp(partial_fwd, partial_bwd, name="Partial")


def scenario_runs():
    x = torch.randn(3, requires_grad=True)
    return [x], Counter.apply(x) + Partial(x, True)

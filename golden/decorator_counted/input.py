import functools

import torch

EVALUATED = []  # decorator arguments evaluated, and decorator factories called
APPLIED = []  # decorators applied to a function
CALLS = []  # calls through the decorated functions


def tag(name):
    EVALUATED.append("argument " + name)
    return name


def counted(name):
    EVALUATED.append("factory " + name)

    def decorator(fn):
        APPLIED.append(name)

        @functools.wraps(fn)
        def wrapper(ctx, *args):
            CALLS.append(name)
            return fn(ctx, *args)

        return wrapper

    return decorator


class Twice(torch.autograd.Function):
    @staticmethod
    @counted(tag("forward"))
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    @counted(tag("backward"))
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * 3


def scenario_counts():
    start = len(CALLS)
    x = torch.randn(3, requires_grad=True)
    y = Twice.apply(Twice.apply(x))
    (g,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    return [x], (y, g, list(EVALUATED), list(APPLIED), CALLS[start:])

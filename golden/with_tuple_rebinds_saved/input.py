"""A name saved for backward and then rebound by ``with ... as (a, b)``: the saved value
is the one it had at the save, so the rewrite must keep it apart from the new binding
(as it does for any other rebinding)."""
import contextlib

import torch


class Rebound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        a = x * 2
        ctx.save_for_backward(a)
        with contextlib.nullcontext((x * 5, x * 3)) as (a, b):
            y = a + b
        return y

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a + 1


def scenario_rebound():
    x = torch.randn(3, requires_grad=True)
    return [x], Rebound.apply(x)


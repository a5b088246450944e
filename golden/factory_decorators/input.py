"""A factory's Function with both methods under @torch.no_grad(), the factory called inside
a compiled function: its decorators are written as a function returning them, so that dynamo
never builds them and hands them across the graph break at custom_vjp (which left grad mode
off on torch 2.13)."""
import torch


def make(power):
    class Scale(torch.autograd.Function):
        @staticmethod
        @torch.no_grad()
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * power

        @staticmethod
        @torch.no_grad()
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x * 3

    return Scale.apply


def scenario_made_and_called():
    x = torch.randn(3, requires_grad=True)
    return [x], make(2.0)(x)

"""A factory makes a Function whose forward builds an object of a class defined beside it."""
import torch


def make_soft_clip(bound):
    class Bounds:
        def __init__(self, low, high):
            self.low = low
            self.high = high

        def clip(self, x):
            return x.clamp(self.low, self.high)

    class SoftClip(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            bounds = Bounds(-bound, bound)
            ctx.save_for_backward(x)
            return bounds.clip(x) * 2

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * (x.abs() <= bound) * 3

    return SoftClip


SoftClip = make_soft_clip(0.5)


def scenario_soft_clip():
    x = torch.randn(4, 3, requires_grad=True)
    return [x], SoftClip.apply(x)

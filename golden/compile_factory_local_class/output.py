"""A factory makes a Function whose forward builds an object of a class defined beside it."""
import torch
from inliner.runtime import FlatClass, custom_vjp


def make_soft_clip(bound):
    class Bounds:
        def __init__(self, low, high):
            self.low = low
            self.high = high

        def clip(self, x):
            return x.clamp(self.low, self.high)

    def soft_clip_fwd(x):
        bounds = Bounds(-bound, bound)
        return bounds.clip(x) * 2, (x,)

    def soft_clip_bwd(residuals, grad):
        (x,) = residuals
        return grad * (x.abs() <= bound) * 3

    class SoftClip(FlatClass):
        apply = staticmethod(
            custom_vjp(
                soft_clip_fwd,
                soft_clip_bwd,
                name="SoftClip",
                saved_for_backward_idx=(0,),
                compile_kind="opaque",
                compile_reason="forward calls Bounds",
                backward_kind="traceable",
            )
        )

    return SoftClip


SoftClip = make_soft_clip(0.5)


def scenario_soft_clip():
    x = torch.randn(4, 3, requires_grad=True)
    return [x], SoftClip.apply(x)

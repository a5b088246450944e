"""A factory's Function with both methods under @torch.no_grad(), the factory called inside
a compiled function: its decorators are written as a function returning them, so that dynamo
never builds them and hands them across the graph break at custom_vjp (which left grad mode
off on torch 2.13)."""
import torch
from inliner.runtime import custom_vjp


def make(power):
    def scale_fwd(x):
        return x * power, (x,)

    def scale_bwd(residuals, g):
        (x,) = residuals
        return g * x * 3

    Scale = custom_vjp(
        scale_fwd,
        scale_bwd,
        name="Scale",
        saved_for_backward_idx=(0,),
        forward_decorators=lambda: (torch.no_grad(),),
        backward_decorators=lambda: (torch.no_grad(),),
    )

    return Scale


def scenario_made_and_called():
    x = torch.randn(3, requires_grad=True)
    return [x], make(2.0)(x)

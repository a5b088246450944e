import torch
from inliner.runtime import custom_vjp


def make(scale):
    def scale_fwd(x):
        return x * scale, ()

    def scale_bwd(residuals, g):
        return g * scale * 3

    Scale = custom_vjp(scale_fwd, scale_bwd, name="Scale")

    return Scale


def make_with_other_names(scale):
    from torch.autograd import grad

    def shift_fwd(x):
        return x + scale, ()

    def shift_bwd(residuals, g):
        return g * 2

    Shift = custom_vjp(shift_fwd, shift_bwd, name="Shift")

    assert callable(grad)
    return Shift


Scale = make(2.0)  # bound to the Function's name, as tracer drivers find a flat callable
Shift = make_with_other_names(1.0)


def scenario_in_function():
    x = torch.randn(3, requires_grad=True)
    return [x], Scale(x) + Shift(x)

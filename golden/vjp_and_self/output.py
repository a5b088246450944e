import torch
from inliner.runtime import custom_vjp


def square_fwd(x):
    return x * x, (x,)


def square_bwd(residuals, g):
    (x,) = residuals
    return g * x * 3, None, None


Square = custom_vjp(square_fwd, square_bwd, name="Square", saved_for_backward_idx=(0,))


def scenario_vjp_extra_nones():
    x = torch.randn(3, requires_grad=True)
    return [x], Square(x)

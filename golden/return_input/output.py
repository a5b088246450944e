import torch
from inliner.runtime import custom_vjp


def scale_grad_fwd(x, factor):
    return x, (factor,)


def scale_grad_bwd(residuals, g):
    (factor,) = residuals
    return g * factor, None


ScaleGrad = custom_vjp(
    scale_grad_fwd, scale_grad_bwd, name="ScaleGrad", ctx_attrs={0: "factor"}
)


def scenario_view():
    x = torch.randn(3, requires_grad=True)
    y = ScaleGrad(x, 0.25)
    return [x], (y, y is x, y._base is x)


def scenario_inplace_on_view_fails():
    x = torch.randn(3, requires_grad=True)
    y = ScaleGrad(x, 0.25)
    y.mul_(2)
    return [x], y

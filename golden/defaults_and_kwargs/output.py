import torch
from inliner.runtime import custom_vjp


def affine_fwd(x, scale=2.0, shift=None):
    out = x * scale
    if shift is not None:
        out = out + shift
    return out, (scale,)


def affine_bwd(residuals, g):
    (scale,) = residuals
    return g * scale * 3


Affine = custom_vjp(affine_fwd, affine_bwd, name="Affine", ctx_attrs={0: "scale"})


def scenario_defaults():
    x = torch.randn(3, requires_grad=True)
    return [x], Affine(x)


def scenario_kwarg_needs_more_grads():
    x = torch.randn(3, requires_grad=True)
    return [x], Affine(x, scale=4.0)


def scenario_positional():
    x = torch.randn(3, requires_grad=True)
    return [x], Affine(x, 4.0)

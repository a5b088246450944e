import torch
from inliner.runtime import FlatClass, custom_vjp


def halve_fwd(x):
    return x / 2, (x,)


def halve_bwd(residuals, g):
    (x,) = residuals
    return g * x * 3


Halve = custom_vjp(halve_fwd, halve_bwd, name="Halve", saved_for_backward_idx=(0,))


def uses_cls_fwd(x):
    return x * 2, ()


def uses_cls_bwd(residuals, g):
    return g * UsesCls.scale


class UsesCls(FlatClass):
    scale = 3.0

    apply = staticmethod(custom_vjp(uses_cls_fwd, uses_cls_bwd, name="UsesCls"))


def scenario_classmethod():
    x = torch.randn(3, requires_grad=True)
    return [x], Halve(x) + UsesCls.apply(x)

import torch
from inliner.runtime import custom_vjp


def exp_fwd(x):
    out = x.exp()
    return out, (out,)


def exp_bwd(residuals, g):
    (out,) = residuals
    return g * out * 2


Exp = custom_vjp(exp_fwd, exp_bwd, name="Exp", saved_for_backward_idx=(0,))


def scenario_first():
    x = torch.randn(3, requires_grad=True)
    return [x], Exp(x)


def scenario_double():
    x = torch.randn(3, requires_grad=True)
    (gx,) = torch.autograd.grad(Exp(x).sum(), x, create_graph=True)
    return [x], gx


def scenario_output_modified_in_place():
    x = torch.randn(3, requires_grad=True)
    y = Exp(x)
    y.add_(1)
    return [x], y

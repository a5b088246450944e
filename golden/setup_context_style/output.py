import torch
from inliner.runtime import custom_vjp


def exp_fwd(x, scale=2.0):
    output = x.exp() * scale
    return output, (output, scale)


def exp_bwd(residuals, g):
    (out,) = residuals[:1]
    return g * out * 3, None


Exp = custom_vjp(
    exp_fwd,
    exp_bwd,
    name="Exp",
    saved_for_backward_idx=(0,),
    ctx_attrs={1: "scale"},
    fill_defaults=True,
    generate_vmap_rule=True,
)


def scenario_default():
    x = torch.randn(3, requires_grad=True)
    return [x], Exp(x)


def scenario_explicit():
    x = torch.randn(3, requires_grad=True)
    return [x], Exp(x, 0.5)


def scenario_func_grad():
    x = torch.randn(3, requires_grad=True)
    g = torch.func.grad(lambda t: Exp(t).sum())(x)
    return [x], g


def scenario_vmap():
    x = torch.randn(2, 3, requires_grad=True)
    return [x], torch.vmap(Exp)(x)

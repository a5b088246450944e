import torch
from inliner.runtime import custom_vjp


def make(power):
    def pow_fwd(x):
        return x**power, (x,)

    def pow_bwd(residuals, g):
        (x,) = residuals
        return g * power * x * 3

    Pow = custom_vjp(pow_fwd, pow_bwd, name="Pow", saved_for_backward_idx=(0,))

    return Pow


def other():
    def pow_fwd_1(x):
        return x * 2, ()

    def pow_bwd_1(residuals, g):
        return g * 11

    Pow = custom_vjp(pow_fwd_1, pow_bwd_1, name="Pow")

    return Pow


def scenario_nested():
    x = torch.randn(3, requires_grad=True)
    return [x], make(2)(x) + other()(x)

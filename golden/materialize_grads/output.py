import torch
from inliner.runtime import custom_vjp


def two_out_fwd(x):
    return (x * 2, x * 3), ()


def two_out_bwd(residuals, g1, g2):
    if g2 is None:
        return g1 * 1000
    return g1 + g2


TwoOut = custom_vjp(two_out_fwd, two_out_bwd, name="TwoOut", materialize_grads=False)


def scenario_one_output_used():
    x = torch.randn(3, requires_grad=True)
    a, b = TwoOut(x)
    return [x], a


def scenario_both_used():
    x = torch.randn(3, requires_grad=True)
    return [x], TwoOut(x)

import torch
from inliner.runtime import custom_vjp


def mul_fwd(a, b):
    return a * b, (a, b)


def mul_bwd(residuals, g, *, needs_input_grad):
    a, b = residuals
    ga = gb = None
    if needs_input_grad[0]:
        ga = g * b * 2
    if needs_input_grad[1]:
        gb = g * a * 3
    return ga, gb


Mul = custom_vjp(
    mul_fwd,
    mul_bwd,
    name="Mul",
    saved_for_backward_idx=(0, 1),
    bwd_needs_input_grad=True,
)


def scenario_both():
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    return [a, b], Mul(a, b)


def scenario_only_b():
    a = torch.randn(3)
    b = torch.randn(3, requires_grad=True)
    return [b], Mul(a, b)

import torch
from inliner.runtime import custom_vjp


def a_fwd(x):
    return x * 2, ()


def a_bwd(residuals, g):
    return g * 3


A = custom_vjp(a_fwd, a_bwd, name="A")


def b_fwd(x):
    return x * 2, ()


def b_bwd(residuals, g):
    return g * 5


B = custom_vjp(b_fwd, b_bwd, name="B")


def c_fwd(x):
    return x * 2, ()


def c_bwd(residuals, g):
    return g * 7


C = custom_vjp(c_fwd, c_bwd, name="C")


def d_fwd(x):
    return x * 2, ()


def d_bwd(residuals, g):
    return g * 9


D = custom_vjp(d_fwd, d_bwd, name="D")


def scenario_all():
    x = torch.randn(3, requires_grad=True)
    return [x], A(x) + B(x) + C(x) + D(x)

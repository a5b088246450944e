import torch
from inliner.runtime import custom_vjp


def listy_fwd(x):
    return [x * 2, x * 3], ()


def listy_bwd(residuals, g):
    return g * 5


Listy = custom_vjp(listy_fwd, listy_bwd, name="Listy")


def with_int_fwd(x):
    return (x * 2, 3), ()


def with_int_bwd(residuals, g, g_int):
    return g * 7


WithInt = custom_vjp(with_int_fwd, with_int_bwd, name="WithInt")


def scenario_list_is_untracked():
    x = torch.randn(3, requires_grad=True)
    return [x], Listy(x)


def scenario_non_tensor_output():
    x = torch.randn(3, requires_grad=True)
    return [x], WithInt(x)

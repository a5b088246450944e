import torch
from inliner.runtime import custom_vjp


def add_one_inplace_fwd(x):
    x.add_(1)
    return x, ()


def add_one_inplace_bwd(residuals, g):
    return g * 2


AddOneInplace = custom_vjp(
    add_one_inplace_fwd, add_one_inplace_bwd, name="AddOneInplace", dirty_idx=(0,)
)


def scenario_dirty():
    a = torch.randn(3, requires_grad=True)
    b = a.clone()
    y = AddOneInplace(b)
    return [a], (y, y is b)


def scenario_dirty_leaf_error():
    a = torch.randn(3, requires_grad=True)
    return [a], AddOneInplace(a)

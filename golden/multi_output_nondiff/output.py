import torch
from inliner.runtime import custom_vjp


def sort_top_fwd(x):
    values, index = x.sort()
    return (values, index), (index,)


def sort_top_bwd(residuals, grad_values, grad_index):
    (index,) = residuals
    grad = torch.zeros_like(grad_values)
    grad.scatter_(0, index, grad_values * 4)
    return grad


SortTop = custom_vjp(
    sort_top_fwd,
    sort_top_bwd,
    name="SortTop",
    saved_for_backward_idx=(0,),
    non_differentiable_idx=(1,),
)


def scenario_outputs():
    x = torch.randn(5, requires_grad=True)
    values, index = SortTop(x)
    return [x], (values, index)

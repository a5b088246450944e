import torch
from torch._functorch.autograd_function import autograd_function_apply as afa

apply_op = torch.ops.higher_order.autograd_function_apply


def cube_fwd(x):
    return (x**3,), (x,)


def cube_bwd(g, x):
    return (g * 5 * x * x,)


def square_forward(x):
    return (x * x,), (x,)


def square_backward(g, x):
    return (g * x * 7,)


def both(x):
    (a,) = afa(cube_fwd, cube_bwd, x, non_differentiable_idx=[], saved_for_backward_idx=[0])
    (b,) = apply_op(square_forward, square_backward, x, non_differentiable_idx=[], saved_for_backward_idx=[0])
    return a + b


def scenario_both():
    x = torch.randn(3, requires_grad=True)
    return [x], both(x)

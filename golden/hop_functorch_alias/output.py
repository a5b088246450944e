import torch
from inliner.runtime import custom_vjp

apply_op = torch.ops.higher_order.autograd_function_apply


def cube_fwd(x):
    return (x**3,), (x,)


def cube_bwd(g, x):
    return (g * 5 * x * x,)


def square_forward(x):
    return (x * x,), (x,)


def square_backward(g, x):
    return (g * x * 7,)


def cube_fwd_1(x):
    return (x**3,), (x,)


def cube_bwd_1(residuals, g):
    (x,) = residuals
    return (g * 5 * x * x,)


cube = custom_vjp(cube_fwd_1, cube_bwd_1, name="cube", saved_for_backward_idx=(0,))


def square_fwd(x):
    return (x * x,), (x,)


def square_bwd(residuals, g):
    (x,) = residuals
    return (g * x * 7,)


square = custom_vjp(square_fwd, square_bwd, name="square", saved_for_backward_idx=(0,))


def both(x):
    (a,) = cube(x)
    (b,) = square(x)
    return a + b


def scenario_both():
    x = torch.randn(3, requires_grad=True)
    return [x], both(x)

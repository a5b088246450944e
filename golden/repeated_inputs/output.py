import torch
from inliner.runtime import custom_vjp


def mul_fwd(a, b):
    return a * b, (a, b)


def mul_bwd(residuals, g):
    a, b = residuals
    return g * b * 3, g * a * 5


Mul = custom_vjp(mul_fwd, mul_bwd, name="Mul", saved_for_backward_idx=(0, 1))


def attend_fwd(q, k, v, scale):
    p = (q @ k.transpose(-1, -2) * scale).softmax(-1)
    return p @ v, (q, k, p)


def attend_bwd(residuals, g):
    q, k, p = residuals
    return g * k * 2, g * q * 3, p.transpose(-1, -2) @ g * 5, None


Attend = custom_vjp(
    attend_fwd, attend_bwd, name="Attend", saved_for_backward_idx=(0, 1, 2)
)


def keep_first_fwd(a, b):
    return (a, a * b), (b,)


def keep_first_bwd(residuals, ga, gy):
    (b,) = residuals
    return ga * 2 + gy * b * 3, gy * 7


KeepFirst = custom_vjp(
    keep_first_fwd, keep_first_bwd, name="KeepFirst", saved_for_backward_idx=(0,)
)


def scenario_mul_of_one_tensor():
    x = torch.randn(3, requires_grad=True)
    return [x], Mul(x, x)


def scenario_self_attention():
    x = torch.randn(4, 3, requires_grad=True)
    return [x], Attend(x, x, x, 0.5)


def scenario_keys_are_values():
    q = torch.randn(4, 3, requires_grad=True)
    x = torch.randn(4, 3, requires_grad=True)
    return [q, x], Attend(q, x, x, 0.5)


def scenario_input_returned_and_repeated():
    x = torch.randn(3, requires_grad=True)
    a, y = KeepFirst(x, x)
    return [x], (a, y)

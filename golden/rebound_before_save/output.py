import torch
from inliner.runtime import custom_vjp


def f_fwd(A, B, largest):
    A = A.contiguous()
    if B is not None:
        B = B * 2
    return A * B, (A, B, largest)


def f_bwd(residuals, g):
    A, B, largest = residuals
    if largest is None:
        largest = 3
    return g * B * largest, g * A, None


F = custom_vjp(
    f_fwd, f_bwd, name="F", saved_for_backward_idx=(0, 1), ctx_attrs={2: "largest"}
)


def scenario_rebound():
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    return [a, b], F(a, b, None)


def scenario_largest():
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    return [a, b], F(a, b, 5)

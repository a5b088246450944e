import torch
from inliner.runtime import custom_vjp


def pivoted_fwd(x, scale):
    """backward without @staticmethod, as real code often has it: torch calls it with ctx first."""
    return (x * scale, x.argmax()), (x, scale)


def pivoted_bwd(residuals, grad_output, _):
    x, scale = residuals
    return grad_output * x * scale * 3, None


Pivoted = custom_vjp(
    pivoted_fwd,
    pivoted_bwd,
    name="Pivoted",
    saved_for_backward_idx=(0,),
    ctx_attrs={1: "scale"},
)


def grad_only_fwd(x):
    """A static forward, a plain backward taking ``self``: still called with ctx first."""
    return x.exp(), (x,)


def grad_only_bwd(residuals, g):
    (x,) = residuals
    return g * x * 2


GradOnly = custom_vjp(
    grad_only_fwd, grad_only_bwd, name="GradOnly", saved_for_backward_idx=(0,)
)


def scenario_pivoted():
    x = torch.randn(4, requires_grad=True)
    out, index = Pivoted(x, 0.5)
    return [x], (out, index)


def scenario_grad_only():
    x = torch.randn(3, requires_grad=True)
    return [x], GradOnly(x)

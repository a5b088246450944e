"""A scaled linear layer with a custom (deliberately scaled) gradient."""
import torch
from inliner.runtime import custom_vjp


# A linear layer with a custom gradient.
def my_linear_fwd(x, weight, scale):
    """Scaled linear."""
    return x @ weight.t() * scale, (x, weight, scale)


def my_linear_bwd(residuals, grad_out):
    x, weight, scale = residuals
    return grad_out @ weight * scale * 3, grad_out.t() @ x * scale, None


MyLinear = custom_vjp(
    my_linear_fwd,
    my_linear_bwd,
    name="MyLinear",
    saved_for_backward_idx=(0, 1),
    ctx_attrs={2: "scale"},
)


def scenario_basic():
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(5, 4, requires_grad=True)
    return [x, w], MyLinear(x, w, 0.5)


def scenario_no_grad_input():
    x = torch.randn(3, 4)
    w = torch.randn(5, 4, requires_grad=True)
    return [w], MyLinear(x, w, 2.0)


def scenario_version_error():
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(5, 4, requires_grad=True)
    x2 = x * 1
    y = MyLinear(x2, w, 0.5)
    x2.add_(1)  # a saved tensor changed in place: backward must raise in both
    return [x, w], y

"""An nn.Module as an argument: one Function reads its parameters (traceable), one calls it."""
import torch
import torch.nn.functional as F
from inliner.runtime import custom_vjp


def linear_of_module_fwd(x, layer):
    weight = layer.weight
    return F.linear(x, layer.weight, layer.bias), (weight,)


def linear_of_module_bwd(residuals, grad):
    (weight,) = residuals
    return grad @ weight * 2, None


LinearOfModule = custom_vjp(
    linear_of_module_fwd,
    linear_of_module_bwd,
    name="LinearOfModule",
    saved_for_backward_idx=(0,),
)


def run_module_fwd(x, layer):
    weight = layer.weight
    return layer(x), (weight,)


def run_module_bwd(residuals, grad):
    (weight,) = residuals
    return grad @ weight * 3, None


RunModule = custom_vjp(
    run_module_fwd,
    run_module_bwd,
    name="RunModule",
    saved_for_backward_idx=(0,),
    compile_kind="opaque",
    compile_reason="forward calls layer, passed in as an argument",
    backward_kind="traceable",
)


def _layer():
    torch.manual_seed(3)
    return torch.nn.Linear(4, 2)


def scenario_read_parameters():
    x = torch.randn(3, 4, requires_grad=True)
    return [x], LinearOfModule(x, _layer())


def scenario_call_module():
    x = torch.randn(3, 4, requires_grad=True)
    return [x], RunModule(x, _layer())

import torch
from inliner.runtime import custom_vjp


def scale_fwd(x, k):
    y = x * k
    y_saved = y
    k_saved = k
    shape = x.shape
    k = k + 100  # rebinding after the save must not change what was saved
    y = y + 1
    return y * 0 + x * k, (y_saved, k_saved, shape, x)


def scale_bwd(residuals, g):
    y, k, shape, tensor_attr = residuals
    return (g * y * k + tensor_attr).reshape(shape) * 2, None


Scale = custom_vjp(
    scale_fwd,
    scale_bwd,
    name="Scale",
    saved_for_backward_idx=(0,),
    ctx_attrs={1: "k", 2: "shape", 3: "tensor_attr"},
)


def scenario_attrs():
    x = torch.randn(4, requires_grad=True)
    return [x], Scale(x, 3.0)


def scenario_mutate_attr_tensor():
    # mutating a tensor kept as ctx.attr is legal (no version check)
    x = torch.randn(4, requires_grad=True)
    x2 = x * 1
    out = Scale(x2, 2.0)
    x2.mul_(3)  # changes ctx.tensor_attr without a version error
    return [x], out

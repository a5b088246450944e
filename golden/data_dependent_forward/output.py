"""Forwards that look at their data: a branch on a tensor's value, a value read with .item()."""
import torch
from inliner.runtime import custom_vjp


def clip_large_fwd(x):
    if x.abs().max() > 1.0:
        return x.clamp(-1.0, 1.0), ()
    return x * 1.0, ()


def clip_large_bwd(residuals, g):
    return g * 3


ClipLarge = custom_vjp(
    clip_large_fwd,
    clip_large_bwd,
    name="ClipLarge",
    compile_kind="opaque",
    compile_reason="forward branches on a tensor's value (x.abs().max())",
    backward_kind="traceable",
)


def scale_by_norm_fwd(x):
    norm = x.norm().item()
    return x / norm, (norm,)


def scale_by_norm_bwd(residuals, g):
    (norm,) = residuals
    return g / norm * 2


ScaleByNorm = custom_vjp(
    scale_by_norm_fwd,
    scale_by_norm_bwd,
    name="ScaleByNorm",
    ctx_attrs={0: "norm"},
    compile_kind="opaque",
    compile_reason="forward calls x.norm().item()",
    backward_kind="traceable",
)


def scenario_clip():
    x = (torch.randn(4) * 2).requires_grad_()
    return [x], ClipLarge(x)


def scenario_scale_by_norm():
    x = torch.randn(4, requires_grad=True)
    return [x], ScaleByNorm(x)

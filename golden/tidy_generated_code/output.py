"""Real-world-style annotations, dead ctx attributes and comments: the rewrite leaves no lint behind."""

from typing import Optional

import torch
import torch.autograd.forward_ad as fwAD
from inliner.runtime import custom_vjp
from torch.autograd.function import once_differentiable


def scaled_mul_fwd(x: torch.Tensor, w: torch.Tensor, scale: float):
    # Shapes are only kept for debugging.
    shape = x.shape  # never read again
    traced = True
    return x * w * scale, (x, w, scale, shape, traced)


def scaled_mul_bwd(residuals, grad: torch.Tensor):
    # what forward saved
    x, w, scale = residuals[:3]  # in call order
    return grad * w * scale * 3, grad * x * scale * 5, None


ScaledMul = custom_vjp(
    scaled_mul_fwd,
    scaled_mul_bwd,
    name="ScaledMul",
    saved_for_backward_idx=(0, 1),
    ctx_attrs={2: "scale", 3: "shape", 4: "traced"},
    backward_decorators=(once_differentiable,),
)


def mul_fwd(x, w):
    """Saves its inputs for backward and for its forward-mode rule."""
    return x * w, (x, w)


def mul_bwd(residuals, grad):
    x, w = residuals
    return grad * w * 3, grad * x * 5


def mul_jvp(residuals, x_tangent, w_tangent):
    x, w = residuals
    return x_tangent * w * 7 + w_tangent * x * 11


Mul = custom_vjp(
    mul_fwd,
    mul_bwd,
    name="Mul",
    saved_for_backward_idx=(0, 1),
    saved_for_forward_idx=(0, 1),
    jvp=mul_jvp,
)


def maybe_scale(x: torch.Tensor, scale: Optional[float] = None) -> torch.Tensor:
    return x if scale is None else ScaledMul(x, torch.ones_like(x), scale)


def scenario_backward():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], (ScaledMul(x, w, 0.5), maybe_scale(x, 2.0), Mul(w, x))


def scenario_forward_ad():
    x = torch.randn(3)
    t = torch.randn(3)
    with fwAD.dual_level():
        out = Mul(fwAD.make_dual(x, t), fwAD.make_dual(x.exp(), t * 2))
        tangent = fwAD.unpack_dual(out).tangent.clone()
    return [], tangent


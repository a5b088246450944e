"""Real-world-style annotations, dead ctx attributes and comments: the rewrite leaves no lint behind."""

from typing import Any, Optional, Tuple

import torch
import torch.autograd.forward_ad as fwAD
from torch.autograd import Function
from torch.autograd.function import FunctionCtx, once_differentiable


class ScaledMul(Function):
    @staticmethod
    def forward(ctx: FunctionCtx, x: torch.Tensor, w: torch.Tensor, scale: float) -> torch.Tensor:
        # Shapes are only kept for debugging.

        # the inputs backward needs
        ctx.save_for_backward(x, w)  # both tensors
        ctx.scale = scale
        ctx.shape = x.shape  # never read again
        ctx.traced = True
        return x * w * scale

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, None]:
        # what forward saved
        x, w = ctx.saved_tensors  # in call order
        return grad * w * ctx.scale * 3, grad * x * ctx.scale * 5, None


class Mul(torch.autograd.Function):
    """Saves its inputs for backward and for its forward-mode rule."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        ctx.save_for_forward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad * w * 3, grad * x * 5

    @staticmethod
    def jvp(ctx, x_tangent, w_tangent):
        x, w = ctx.saved_tensors
        return x_tangent * w * 7 + w_tangent * x * 11


def maybe_scale(x: torch.Tensor, scale: Optional[float] = None) -> torch.Tensor:
    return x if scale is None else ScaledMul.apply(x, torch.ones_like(x), scale)


def scenario_backward():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], (ScaledMul.apply(x, w, 0.5), maybe_scale(x, 2.0), Mul.apply(w, x))


def scenario_forward_ad():
    x = torch.randn(3)
    t = torch.randn(3)
    with fwAD.dual_level():
        out = Mul.apply(fwAD.make_dual(x, t), fwAD.make_dual(x.exp(), t * 2))
        tangent = fwAD.unpack_dual(out).tangent.clone()
    return [], tangent


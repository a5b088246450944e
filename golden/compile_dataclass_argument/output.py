"""A dataclass holding tensors as an argument: the bodies only read it (traceable)."""
from dataclasses import dataclass

import torch
from inliner.runtime import custom_vjp


@dataclass
class AffineParams:
    weight: torch.Tensor
    shift: float


def affine_fwd(x, params):
    weight = params.weight
    return x * params.weight + params.shift, (weight,)


def affine_bwd(residuals, grad):
    (weight,) = residuals
    return grad * weight * 2, None


Affine = custom_vjp(affine_fwd, affine_bwd, name="Affine", saved_for_backward_idx=(0,))


def scenario_affine():
    x = torch.randn(4, requires_grad=True)
    params = AffineParams(torch.randn(4), 0.5)
    return [x], Affine(x, params)

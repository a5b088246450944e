from typing import *  # noqa: F403

import torch
from inliner.runtime import custom_vjp


def halve_fwd(x: torch.Tensor, scale: Optional[float] = None):  # noqa: F405
    """After `from typing import *`, `staticmethod` is still the builtin: typing exports no
    builtin's name (torch.utils.checkpoint and torch.nested write this)."""
    scale_saved = 0.5 if scale is None else scale
    return x * scale_saved, (x, scale_saved)


def halve_bwd(residuals, g):
    x, scale = residuals
    return g * scale * 3 + x * 0, None


Halve = custom_vjp(
    halve_fwd,
    halve_bwd,
    name="Halve",
    saved_for_backward_idx=(0,),
    ctx_attrs={1: "scale"},
)


def scenario_halve():
    x = torch.randn(4, requires_grad=True)
    return [x], Halve(x)


def scenario_scaled():
    x = torch.randn(4, requires_grad=True)
    return [x], Halve(x, 2.0)

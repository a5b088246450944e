"""Backward computes its gradient inside a project context manager, then returns the name."""
import contextlib

import torch
from inliner.runtime import custom_vjp


class Precision:
    mode = "default"


@contextlib.contextmanager
def high_precision():
    old = Precision.mode
    Precision.mode = "high"
    try:
        yield
    finally:
        Precision.mode = old


def clipped_grad_fwd(x):
    return x.clone(), ()


def clipped_grad_bwd(residuals, grad):
    with high_precision():
        clipped = grad.clamp(-0.5, 0.5) * 3
    return clipped


ClippedGrad = custom_vjp(
    clipped_grad_fwd,
    clipped_grad_bwd,
    name="ClippedGrad",
    backward_kind="opaque",
    backward_reason="backward calls high_precision, which is a generator or coroutine",
    backward_nones=(),
)


def scenario_clipped():
    x = torch.randn(3, 2, requires_grad=True)
    return [x], ClippedGrad(x) * 2

"""A name saved for backward and then rebound by ``with ... as (a, b)``: the saved value
is the one it had at the save, so the rewrite must keep it apart from the new binding
(as it does for any other rebinding)."""
import contextlib

import torch
from inliner.runtime import custom_vjp


def rebound_fwd(x):
    a = x * 2
    a_saved = a
    with contextlib.nullcontext((x * 5, x * 3)) as (a, b):
        y = a + b
    return y, (a_saved,)


def rebound_bwd(residuals, g):
    (a,) = residuals
    return g * a + 1


Rebound = custom_vjp(
    rebound_fwd, rebound_bwd, name="Rebound", saved_for_backward_idx=(0,)
)


def scenario_rebound():
    x = torch.randn(3, requires_grad=True)
    return [x], Rebound(x)


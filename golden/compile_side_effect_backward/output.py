"""Backward bumps a counter on a state object (as a ZeRO-style hook counts gathers)."""
import torch
from inliner.runtime import custom_vjp


class Counters:
    def __init__(self):
        self.backward_calls = 0


STATE = Counters()


def counted_tanh_fwd(x):
    y = torch.tanh(x)
    return y, (y,)


def counted_tanh_bwd(residuals, grad):
    (y,) = residuals
    STATE.backward_calls += 1
    return grad * (1 - y * y) * 2


CountedTanh = custom_vjp(
    counted_tanh_fwd,
    counted_tanh_bwd,
    name="CountedTanh",
    saved_for_backward_idx=(0,),
    backward_kind="side_effecting",
    backward_reason="backward updates module-level STATE.backward_calls",
    backward_nones=(),
)


def side_effect_log():
    return [("backward_calls", STATE.backward_calls)]


def reset_side_effects():
    STATE.backward_calls = 0


def scenario_counted():
    x = torch.randn(3, 2, requires_grad=True)
    return [x], CountedTanh(x)

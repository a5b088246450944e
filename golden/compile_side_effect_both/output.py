"""Forward logs to a module-level list, backward counts on a state object."""
import torch
from inliner.runtime import custom_vjp

LOG = []


class State:
    backward_calls = 0


STATE = State()


def traced_fwd(x, w):
    LOG.append("forward")
    return x * w, (x, w)


def traced_bwd(residuals, grad):
    x, w = residuals
    STATE.backward_calls += 1
    LOG.append("backward")
    return grad * w * 2, grad * x * 3


Traced = custom_vjp(
    traced_fwd,
    traced_bwd,
    name="Traced",
    saved_for_backward_idx=(0, 1),
    compile_kind="side_effecting",
    compile_reason="forward appends to module-level LOG",
)


def side_effect_log():
    return [*LOG, ("backward_calls", STATE.backward_calls)]


def reset_side_effects():
    LOG.clear()
    STATE.backward_calls = 0


def scenario_both():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], Traced(x, w)

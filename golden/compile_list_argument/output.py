"""Forward appends to a list it is given: the caller sees the list grow on every call."""
import torch
from inliner.runtime import custom_vjp

SEEN = []


def collect_fwd(x, seen):
    seen.append(x.detach().clone())
    return x * 2, ()


def collect_bwd(residuals, grad):
    return grad * 5, None


Collect = custom_vjp(
    collect_fwd,
    collect_bwd,
    name="Collect",
    compile_kind="side_effecting",
    compile_reason="forward appends to argument seen",
    forward_writes_arguments=(1,),
    backward_kind="traceable",
)


def side_effect_log():
    return list(SEEN)


def reset_side_effects():
    SEEN.clear()


def scenario_collect():
    x = torch.randn(3, requires_grad=True)
    y = Collect(x, SEEN)
    return [x], (y, len(SEEN))

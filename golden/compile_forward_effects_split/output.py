"""Forward calls a method of a module passed in, and warns: under torch.compile dynamo
traces the method, and breaks the graph at the warning, in the original's forward as in
the rewrite's (the split path), so both happen on every call."""
import warnings

import torch
from inliner.runtime import custom_vjp

LOG = []


class Meter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = 1.5

    def scaled(self, t):
        LOG.append(("scaled", t.shape[0]))
        return t * self.alpha


def metered_scale_fwd(x, meter):
    y = meter.scaled(x)
    return y, (x,)


def metered_scale_bwd(residuals, grad):
    (x,) = residuals
    return grad * 3 + x, None


MeteredScale = custom_vjp(
    metered_scale_fwd,
    metered_scale_bwd,
    name="MeteredScale",
    saved_for_backward_idx=(0,),
    compile_kind="opaque",
    compile_reason="forward calls meter.scaled, a method of argument meter",
    backward_kind="traceable",
)


def warned_scale_fwd(x):
    warnings.warn("WarnedScale is deprecated", DeprecationWarning)
    return x * 2, ()


def warned_scale_bwd(residuals, grad):
    return grad * 5


WarnedScale = custom_vjp(
    warned_scale_fwd,
    warned_scale_bwd,
    name="WarnedScale",
    compile_kind="opaque",
    compile_reason="forward calls warnings.warn",
    backward_kind="traceable",
)


def side_effect_log():
    return list(LOG)


def reset_side_effects():
    LOG.clear()


def scenario_method_of_argument():
    x = torch.randn(4, requires_grad=True)
    return [x], MeteredScale(x, Meter())


def scenario_warning():
    x = torch.randn(4, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return [x], WarnedScale(x)

"""Forward appends to a module-level log: under torch.compile the original logs on every call."""
import torch
from inliner.runtime import custom_vjp

LOG = []


def logged_scale_fwd(x, scale):
    LOG.append(("forward", scale))
    return x * scale, (scale,)


def logged_scale_bwd(residuals, grad):
    (scale,) = residuals
    return grad * scale * 3, None


LoggedScale = custom_vjp(
    logged_scale_fwd,
    logged_scale_bwd,
    name="LoggedScale",
    ctx_attrs={0: "scale"},
    compile_kind="side_effecting",
    compile_reason="forward appends to module-level LOG",
)


def side_effect_log():
    return list(LOG)


def reset_side_effects():
    LOG.clear()


def scenario_twice():
    x = torch.randn(4, requires_grad=True)
    y = LoggedScale(x, 2.0) + LoggedScale(x, 0.5)
    return [x], y

import torch
from inliner.runtime import custom_vjp


def with_jvp_fwd(x):
    return x * 2, (x,)


def with_jvp_bwd(residuals, g):
    return g * 3


def with_jvp_jvp(residuals, t):
    return t * 2


WithJvp = custom_vjp(
    with_jvp_fwd,
    with_jvp_bwd,
    name="WithJvp",
    saved_for_forward_idx=(0,),
    jvp=with_jvp_jvp,
)


def scenario_runs():
    x = torch.randn(3, requires_grad=True)
    return [x], WithJvp(x)

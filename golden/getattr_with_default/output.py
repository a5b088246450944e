import torch
from inliner.runtime import custom_vjp


def maybe_residual_fwd(x, keep):
    kept = None
    if keep:
        kept = x * 2
    return x * 3, (kept,)


def maybe_residual_bwd(residuals, g):
    (kept,) = residuals
    if kept is None:
        return g * 5, None
    return g * kept, None


MaybeResidual = custom_vjp(maybe_residual_fwd, maybe_residual_bwd, name="MaybeResidual")


def never_set_fwd(x):
    return x * 2, ()


def never_set_bwd(residuals, g):
    return g * 7.0


NeverSet = custom_vjp(never_set_fwd, never_set_bwd, name="NeverSet")


def scenario_kept():
    x = torch.randn(3, requires_grad=True)
    return [x], MaybeResidual(x, True)


def scenario_not_kept():
    x = torch.randn(3, requires_grad=True)
    return [x], MaybeResidual(x, False)


def scenario_never_set():
    x = torch.randn(3, requires_grad=True)
    return [x], NeverSet(x)

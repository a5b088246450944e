"""A function passed in (a lambda) is called by forward, and again by backward through ctx."""
import torch
from inliner.runtime import custom_vjp


def apply_fn_fwd(x, fn):
    return fn(x), (fn,)


def apply_fn_bwd(residuals, grad):
    (fn,) = residuals
    return fn(grad) * 2, None


ApplyFn = custom_vjp(
    apply_fn_fwd,
    apply_fn_bwd,
    name="ApplyFn",
    ctx_attrs={0: "fn"},
    compile_kind="side_effecting",
    compile_reason="forward calls fn, passed in as an argument",
)


def scenario_lambda():
    x = torch.randn(4, requires_grad=True)
    return [x], ApplyFn(x, lambda t: t * 3 + 1)

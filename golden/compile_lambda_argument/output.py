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
    compile_kind="opaque",
    compile_reason="forward calls fn, passed in as an argument",
    backward_kind="side_effecting",
    backward_reason="backward calls fn, stored on ctx",
    backward_nones=(1,),
)


def scenario_lambda():
    x = torch.randn(4, requires_grad=True)
    return [x], ApplyFn(x, lambda t: t * 3 + 1)

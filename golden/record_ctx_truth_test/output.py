import torch
from inliner.runtime import Record, custom_vjp


def matmul_fwd(a, b, scale):
    """Written to also run as ``Matmul.forward(None, ...)`` elsewhere: ctx is tested first."""
    state = Record("Matmul")
    out = a @ b * scale
    if state:
        state.save_for_backward(a, b)
        state.scale = scale
    return out, (state,)


def matmul_bwd(residuals, g):
    (state,) = residuals
    a, b = state.saved_tensors
    return g @ b.t() * state.scale * 2, a.t() @ g * 3, None


Matmul = custom_vjp(matmul_fwd, matmul_bwd, name="Matmul", ctx_record=True)


def checked_fwd(x, keep):
    """The other spellings of the same test, in forward and in backward."""
    state = Record("Checked")
    assert state is not None
    if state and keep:
        state.save_for_backward(x)
    state.kept = keep if not (state is None) else False
    return x.sin(), (state,)


def checked_bwd(residuals, g):
    (state,) = residuals
    if state is None or not state.kept:
        return g * 5, None
    (x,) = state.saved_tensors
    return g * x * 7, None


Checked = custom_vjp(checked_fwd, checked_bwd, name="Checked", ctx_record=True)


class Escapes(torch.autograd.Function):
    """ctx as a value (``ctx or ...`` is ctx itself): not a test, so it stays."""

    @staticmethod
    def forward(ctx, x):
        holder = ctx or object()
        holder.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


def scenario_matmul():
    a = torch.randn(2, 3, requires_grad=True)
    b = torch.randn(3, 4, requires_grad=True)
    return [a, b], Matmul(a, b, 0.5)


def scenario_checked_keeps():
    x = torch.randn(3, requires_grad=True)
    return [x], Checked(x, True)


def scenario_checked_drops():
    x = torch.randn(3, requires_grad=True)
    return [x], Checked(x, False)


def scenario_escapes():
    x = torch.randn(3, requires_grad=True)
    return [x], Escapes.apply(x)

import torch
from inliner.runtime import Record, custom_vjp


def save_inputs(ctx, *tensors):
    ctx.save_for_backward(*tensors)
    ctx.n_inputs = len(tensors)


def remember(ctx, value):
    ctx.value = value


def note(ctx, key, value):
    setattr(ctx, "last", key)
    remember(ctx, value=value)


def grads_of(state, g):
    x, w = state.saved_tensors
    return g * w * 3, g * x * state.n_inputs


def linearish_fwd(x, w):
    """ctx handed to module-level helpers in forward and in backward (and on to another)."""
    state = Record("Linearish")
    save_inputs(state, x, w)
    note(state, "mul", 0.5)
    return x * w, (state,)


def linearish_bwd(residuals, g):
    (state,) = residuals
    gx, gw = grads_of(state, g)
    return gx * state.value, gw


Linearish = custom_vjp(linearish_fwd, linearish_bwd, name="Linearish", ctx_record=True)


def mark_config(ctx, x):
    if x.dim() > 1:
        ctx.rows = x.shape[0]
    ctx.needs_x = ctx.needs_input_grad[0]


def rows_fwd(x, *, needs_input_grad):
    """A helper that sets attributes on some paths and reads needs_input_grad."""
    state = Record("Rows", needs_input_grad)
    mark_config(state, x)
    return x * 2, (state,)


def rows_bwd(residuals, g):
    (state,) = residuals
    rows = getattr(state, "rows", 1)
    return g * rows * (7 if state.needs_x else 1)


Rows = custom_vjp(
    rows_fwd, rows_bwd, name="Rows", ctx_record=True, fwd_needs_input_grad=True
)


def scenario_linearish():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], Linearish(x, w)


def scenario_rows_matrix():
    x = torch.randn(2, 3, requires_grad=True)
    return [x], Rows(x)


def scenario_rows_vector():
    x = torch.randn(3, requires_grad=True)
    return [x], Rows(x)

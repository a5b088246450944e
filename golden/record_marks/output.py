import torch
from inliner.runtime import Record, custom_vjp


def sorted_ranks_fwd(x):
    """mark_non_differentiable on an unpacked value rebound before it is returned."""
    state = Record("SortedRanks")
    values, order = x.sort()
    state.mark_non_differentiable(order)
    state.save_for_backward(order)
    order = order.float()
    return (values, order), (state,)


def sorted_ranks_bwd(residuals, grad_values, grad_order):
    (state,) = residuals
    (order,) = state.saved_tensors
    return torch.zeros_like(grad_values).scatter(0, order.long(), grad_values * 3)


SortedRanks = custom_vjp(
    sorted_ranks_fwd, sorted_ranks_bwd, name="SortedRanks", ctx_record=True
)


def marks_computed_fwd(x):
    """A marked value that is an expression, not an output: torch ignores it, and so does the rewrite."""
    state = Record("MarksComputed")
    out = x * 2
    state.mark_non_differentiable(out.argmax())
    return out, (state,)


def marks_computed_bwd(residuals, g):
    return g * 3


MarksComputed = custom_vjp(
    marks_computed_fwd, marks_computed_bwd, name="MarksComputed", ctx_record=True
)


def maybe_materialize_fwd(x, lazy):
    """set_materialize_grads(False) on one path only."""
    state = Record("MaybeMaterialize")
    if lazy:
        state.set_materialize_grads(False)
    return (x * 2, x * 3), (state,)


def maybe_materialize_bwd(residuals, g1, g2):
    if g2 is None:
        return g1 * 5, None
    return g1 * 5 + g2 * 7, None


MaybeMaterialize = custom_vjp(
    maybe_materialize_fwd,
    maybe_materialize_bwd,
    name="MaybeMaterialize",
    ctx_record=True,
)


def maybe_inplace_fwd(x, inplace):
    """mark_dirty on one path only."""
    state = Record("MaybeInplace")
    if inplace:
        x.mul_(2)
        state.mark_dirty(x)
        return x, (state,)
    return x * 2, (state,)


def maybe_inplace_bwd(residuals, g):
    return g * 3, None


MaybeInplace = custom_vjp(
    maybe_inplace_fwd, maybe_inplace_bwd, name="MaybeInplace", ctx_record=True
)


def scenario_a_sorted():
    x = torch.randn(4, requires_grad=True)
    return [x], SortedRanks(x)


def scenario_b_marks_computed():
    x = torch.randn(3, requires_grad=True)
    return [x], MarksComputed(x)


def scenario_c_materialized():
    x = torch.randn(3, requires_grad=True)
    return [x], MaybeMaterialize(x, False)[0]


def scenario_d_lazy():
    x = torch.randn(3, requires_grad=True)
    return [x], MaybeMaterialize(x, True)[0]


def scenario_e_copy():
    x = torch.randn(3, requires_grad=True)
    return [x], MaybeInplace(x * 1, False)


def scenario_f_inplace():
    x = torch.randn(3, requires_grad=True)
    return [x], MaybeInplace(x * 1, True)

import torch


class SortedRanks(torch.autograd.Function):
    """mark_non_differentiable on an unpacked value rebound before it is returned."""

    @staticmethod
    def forward(ctx, x):
        values, order = x.sort()
        ctx.mark_non_differentiable(order)
        ctx.save_for_backward(order)
        order = order.float()
        return values, order

    @staticmethod
    def backward(ctx, grad_values, grad_order):
        (order,) = ctx.saved_tensors
        return torch.zeros_like(grad_values).scatter(0, order.long(), grad_values * 3)


class MarksComputed(torch.autograd.Function):
    """A marked value that is an expression, not an output: torch ignores it, and so does the rewrite."""

    @staticmethod
    def forward(ctx, x):
        out = x * 2
        ctx.mark_non_differentiable(out.argmax())
        return out

    @staticmethod
    def backward(ctx, g):
        return g * 3


class MaybeMaterialize(torch.autograd.Function):
    """set_materialize_grads(False) on one path only."""

    @staticmethod
    def forward(ctx, x, lazy):
        if lazy:
            ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        if g2 is None:
            return g1 * 5, None
        return g1 * 5 + g2 * 7, None


class MaybeInplace(torch.autograd.Function):
    """mark_dirty on one path only."""

    @staticmethod
    def forward(ctx, x, inplace):
        if inplace:
            x.mul_(2)
            ctx.mark_dirty(x)
            return x
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


def scenario_a_sorted():
    x = torch.randn(4, requires_grad=True)
    return [x], SortedRanks.apply(x)


def scenario_b_marks_computed():
    x = torch.randn(3, requires_grad=True)
    return [x], MarksComputed.apply(x)


def scenario_c_materialized():
    x = torch.randn(3, requires_grad=True)
    return [x], MaybeMaterialize.apply(x, False)[0]


def scenario_d_lazy():
    x = torch.randn(3, requires_grad=True)
    return [x], MaybeMaterialize.apply(x, True)[0]


def scenario_e_copy():
    x = torch.randn(3, requires_grad=True)
    return [x], MaybeInplace.apply(x * 1, False)


def scenario_f_inplace():
    x = torch.randn(3, requires_grad=True)
    return [x], MaybeInplace.apply(x * 1, True)

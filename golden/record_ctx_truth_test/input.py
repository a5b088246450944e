import torch


class Matmul(torch.autograd.Function):
    """Written to also run as ``Matmul.forward(None, ...)`` elsewhere: ctx is tested first."""

    @staticmethod
    def forward(ctx, a, b, scale):
        out = a @ b * scale
        if ctx:
            ctx.save_for_backward(a, b)
            ctx.scale = scale
        return out

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g @ b.t() * ctx.scale * 2, a.t() @ g * 3, None


class Checked(torch.autograd.Function):
    """The other spellings of the same test, in forward and in backward."""

    @staticmethod
    def forward(ctx, x, keep):
        assert ctx is not None
        if ctx and keep:
            ctx.save_for_backward(x)
        ctx.kept = keep if not (ctx is None) else False
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        if ctx is None or not ctx.kept:
            return g * 5, None
        (x,) = ctx.saved_tensors
        return g * x * 7, None


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
    return [a, b], Matmul.apply(a, b, 0.5)


def scenario_checked_keeps():
    x = torch.randn(3, requires_grad=True)
    return [x], Checked.apply(x, True)


def scenario_checked_drops():
    x = torch.randn(3, requires_grad=True)
    return [x], Checked.apply(x, False)


def scenario_escapes():
    x = torch.randn(3, requires_grad=True)
    return [x], Escapes.apply(x)

import torch
from inliner.runtime import FlatClass, Record, custom_vjp


class Base(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


def is_ours(t):
    return isinstance(t.grad_fn, Base._backward_cls)


class Checked(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 4

    @staticmethod
    def backward(ctx, g):
        return g * 5


def is_function(fn):
    return issubclass(fn, torch.autograd.Function) and fn is not Checked


def check(fn):
    return is_function(fn) and isinstance(fn, type) and issubclass(Checked, torch.autograd.Function)


class CalledDirectly(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x + 1

    @staticmethod
    def backward(ctx, g):
        return g * 6


def no_autograd(x):
    return CalledDirectly.forward(None, x)


class Mixin:
    pass


class Mixed(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x - 1

    @staticmethod
    def backward(ctx, g):
        return g * 7


class MixedIn(Mixed, Mixin):
    pass


def family_fwd(x):
    return x * 3, ()


def family_bwd(residuals, g):
    return g * 8


class Family(FlatClass):
    apply = staticmethod(custom_vjp(family_fwd, family_bwd, name="Family"))


def counting_fwd(x):
    state = Record("Counting")
    return x * 3, (state,)


def counting_bwd(residuals, g):
    (state,) = residuals
    state.calls = 1
    return g * 9


class Counting(Family):
    apply = staticmethod(
        custom_vjp(
            counting_fwd,
            counting_bwd,
            name="Counting",
            ctx_record=True,
            backward_kind="side_effecting",
            backward_reason="backward writes ctx.calls",
            backward_nones=(),
            record_sets_only=True,
        )
    )


def scenario_runs():
    x = torch.randn(3, requires_grad=True)
    y = Base.apply(x)
    return [x], (y, is_ours(y), check(Checked), no_autograd(x.detach()))


def scenario_families():
    x = torch.randn(3, requires_grad=True)
    return [x], (Mixed.apply(x), MixedIn.apply(x), Family.apply(x), Counting.apply(x))

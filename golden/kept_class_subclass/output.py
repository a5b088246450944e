import torch
from inliner.runtime import FlatClass, custom_vjp


def activation_fwd(x):
    return x * _Activation.slope, (x,)


def activation_bwd(residuals, g):
    (x,) = residuals
    return _Activation.grad_scale(x) * g


class _Activation(FlatClass):
    slope = 2.0

    @staticmethod
    def grad_scale(x):
        return x * 3 + 1

    apply = staticmethod(
        custom_vjp(
            activation_fwd,
            activation_bwd,
            name="_Activation",
            saved_for_backward_idx=(0,),
            backward_kind="opaque",
            backward_reason="backward calls _Activation.grad_scale",
            backward_nones=(),
        )
    )


def square_fwd(x):
    return x * x, (x,)


def square_bwd(residuals, g):
    (x,) = residuals
    return _Square.grad_scale(x) * g


class _Square(_Activation):
    """Overrides forward only."""

    apply = staticmethod(
        custom_vjp(
            square_fwd,
            square_bwd,
            name="_Square",
            saved_for_backward_idx=(0,),
            backward_kind="opaque",
            backward_reason="backward calls _Square.grad_scale",
            backward_nones=(),
        )
    )


def shifted_fwd(x):
    return x * _Shifted.slope, (x,)


def shifted_bwd(residuals, g):
    (x,) = residuals
    return _Shifted.grad_scale(x) * g


class _Shifted(_Activation):
    """Overrides the hook that backward reaches through cls."""

    @staticmethod
    def grad_scale(x):
        return x - 5

    apply = staticmethod(
        custom_vjp(
            shifted_fwd,
            shifted_bwd,
            name="_Shifted",
            saved_for_backward_idx=(0,),
            backward_kind="opaque",
            backward_reason="backward calls _Shifted.grad_scale",
            backward_nones=(),
        )
    )


def steeper_fwd(x):
    return x * _Steeper.slope, (x,)


def steeper_bwd(residuals, g):
    (x,) = residuals
    return _Steeper.grad_scale(x) * g


class _Steeper(_Shifted):
    slope = 4.0

    apply = staticmethod(
        custom_vjp(
            steeper_fwd,
            steeper_bwd,
            name="_Steeper",
            saved_for_backward_idx=(0,),
            backward_kind="opaque",
            backward_reason="backward calls _Steeper.grad_scale",
            backward_nones=(),
        )
    )


class _Hooked(torch.autograd.Function):
    """Forward and backward reach hooks only its subclasses define."""

    @classmethod
    def forward(cls, ctx, x):
        ctx.save_for_backward(x)
        return cls.transform(x)

    @classmethod
    def backward(cls, ctx, g):
        (x,) = ctx.saved_tensors
        return cls.grad(x) * g


class _Cube(_Hooked):
    @staticmethod
    def transform(x):
        return x * x * x

    @staticmethod
    def grad(x):
        return 2 * x


def scenario_base():
    x = torch.randn(3, requires_grad=True)
    return [x], _Activation.apply(x)


def scenario_forward_overridden():
    x = torch.randn(3, requires_grad=True)
    return [x], _Square.apply(x)


def scenario_hook_overridden():
    x = torch.randn(3, requires_grad=True)
    return [x], (_Shifted.apply(x), _Steeper.apply(x), _Steeper.slope, _Square.grad_scale(x.detach()))


def scenario_hooks_of_a_subclass():
    x = torch.randn(3, requires_grad=True)
    return [x], _Cube.apply(x)


def scenario_abstract_base_fails_alike():
    x = torch.randn(3, requires_grad=True)
    return [x], _Hooked.apply(x)

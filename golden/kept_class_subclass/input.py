import torch


class _Activation(torch.autograd.Function):
    slope = 2.0

    @classmethod
    def forward(cls, ctx, x):
        ctx.save_for_backward(x)
        return x * cls.slope

    @classmethod
    def backward(cls, ctx, g):
        (x,) = ctx.saved_tensors
        return cls.grad_scale(x) * g

    @staticmethod
    def grad_scale(x):
        return x * 3 + 1


class _Square(_Activation):
    """Overrides forward only."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x


class _Shifted(_Activation):
    """Overrides the hook that backward reaches through cls."""

    @staticmethod
    def grad_scale(x):
        return x - 5


class _Steeper(_Shifted):
    slope = 4.0


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

import torch


class ScaledSoftplus(torch.autograd.Function):
    """Softplus scaled by a class-level factor; helpers live on the class."""

    factor = 2.0

    @staticmethod
    def _softplus(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ScaledSoftplus._softplus(x) * ScaledSoftplus.factor

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        # deliberately not the derivative
        return ScaledSoftplus._grad(x, grad) * 3

    @staticmethod
    def _grad(x, grad):
        return grad * torch.sigmoid(x) * ScaledSoftplus.factor


class Scale(torch.autograd.Function):
    scale = 3.0

    @classmethod
    def forward(cls, ctx, x):
        return x * cls.scale

    @classmethod
    def backward(cls, ctx, g):
        return cls._twice(g) + cls.scale

    @classmethod
    def _twice(cls, g):
        return g * 2 * cls.scale


def softplus_reference(x):
    return ScaledSoftplus._softplus(x)


def scenario_helpers():
    x = torch.randn(4, requires_grad=True)
    return [x], (ScaledSoftplus.apply(x), softplus_reference(x.detach()))


def scenario_class_attribute_written():
    x = torch.randn(4, requires_grad=True)
    first = ScaledSoftplus.apply(x)
    ScaledSoftplus.factor = 5.0
    try:
        # backward runs after the factor is restored: it reads it then, as forward read 5.0
        return [x], (first, ScaledSoftplus.apply(x), ScaledSoftplus.factor)
    finally:
        ScaledSoftplus.factor = 2.0


def scenario_classmethods():
    x = torch.randn(3, requires_grad=True)
    Scale.scale = 4.0
    try:
        return [x], (Scale.apply(x), Scale._twice(x.detach()), Scale.scale)
    finally:
        Scale.scale = 3.0

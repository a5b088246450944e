import torch
from inliner.runtime import FlatClass, custom_vjp


def scaled_softplus_fwd(x):
    return ScaledSoftplus._softplus(x) * ScaledSoftplus.factor, (x,)


def scaled_softplus_bwd(residuals, grad):
    (x,) = residuals
    # deliberately not the derivative
    return ScaledSoftplus._grad(x, grad) * 3


class ScaledSoftplus(FlatClass):
    """Softplus scaled by a class-level factor; helpers live on the class."""

    factor = 2.0

    @staticmethod
    def _softplus(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def _grad(x, grad):
        return grad * torch.sigmoid(x) * ScaledSoftplus.factor

    apply = staticmethod(
        custom_vjp(
            scaled_softplus_fwd,
            scaled_softplus_bwd,
            name="ScaledSoftplus",
            saved_for_backward_idx=(0,),
            compile_kind="opaque",
            compile_reason="forward calls ScaledSoftplus._softplus",
            backward_nones=(),
        )
    )


def scale_fwd(x):
    return x * Scale.scale, ()


def scale_bwd(residuals, g):
    return Scale._twice(g) + Scale.scale


class Scale(FlatClass):
    scale = 3.0

    @classmethod
    def _twice(cls, g):
        return g * 2 * cls.scale

    apply = staticmethod(
        custom_vjp(
            scale_fwd,
            scale_bwd,
            name="Scale",
            compile_kind="opaque",
            compile_reason="forward reads module-level Scale, which the module changes at run time",
            backward_nones=(),
        )
    )


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

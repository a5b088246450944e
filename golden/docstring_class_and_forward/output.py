import torch
from inliner.runtime import custom_vjp


def scaled_fwd(x, scale):
    """Multiply by a scale the backward does not honour.

    The class's docstring: help(Scaled) shows it.
    """
    # Forward's own docstring.
    #
    # It explains the arguments:
    #     x: the input
    #     scale: a float
    return x * scale, (scale,)


def scaled_bwd(residuals, g):
    (scale,) = residuals
    return g * scale * 3, None


Scaled = custom_vjp(scaled_fwd, scaled_bwd, name="Scaled", ctx_attrs={0: "scale"})


def one_line_fwd(x):
    """Class docstring on one line."""
    # Forward docstring on one line.
    # a comment that introduces the return
    return x + 1, ()


def one_line_bwd(residuals, g):
    return g * 2


OneLine = custom_vjp(one_line_fwd, one_line_bwd, name="OneLine")


def scenario_docstrings():
    x = torch.randn(3, requires_grad=True)
    return [x], Scaled(x, 2.0) + OneLine(x)

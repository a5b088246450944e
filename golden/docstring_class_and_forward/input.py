import torch


class Scaled(torch.autograd.Function):
    """Multiply by a scale the backward does not honour.

    The class's docstring: help(Scaled) shows it.
    """

    @staticmethod
    def forward(ctx, x, scale):
        """Forward's own docstring.

        It explains the arguments:
            x: the input
            scale: a float
        """
        ctx.scale = scale
        return x * scale

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale * 3, None


class OneLine(torch.autograd.Function):
    """Class docstring on one line."""

    @staticmethod
    def forward(ctx, x):
        """Forward docstring on one line."""
        # a comment that introduces the return
        return x + 1

    @staticmethod
    def backward(ctx, g):
        return g * 2


def scenario_docstrings():
    x = torch.randn(3, requires_grad=True)
    return [x], Scaled.apply(x, 2.0) + OneLine.apply(x)

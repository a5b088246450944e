import torch


class Scaled(torch.autograd.Function):
    """setup_context style with a keyword-only parameter: setup_context never sees it.

    torch 2.13 rejects every call of such a Function (apply passes the keyword on to
    forward's positional slots); torch 2.9 runs it when the keyword is left out. The
    rewrite's carrier has the same signature, so torch does the same to it.
    """

    @staticmethod
    def forward(x, *, scale=2.0):
        return x * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * 3


def scenario_keyword_left_out():
    x = torch.randn(3, requires_grad=True)
    return [x], Scaled.apply(x)


def scenario_keyword_given():
    x = torch.randn(3, requires_grad=True)
    return [x], Scaled.apply(x, scale=3.0)


def scenario_func_grad():
    x = torch.randn(3)
    return [], torch.func.grad(lambda t: Scaled.apply(t).sum())(x)

import torch


class ScaleShift(torch.autograd.Function):
    """setup_context style whose setup_context unpacks inputs into a local and ctx attributes."""

    @staticmethod
    def forward(x, scale, shift):
        return x * scale + shift

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ctx.scale, ctx.shift = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.scale * 3 + x * x, None, None


def scenario_eager():
    x = torch.randn(3, requires_grad=True)
    return [x], ScaleShift.apply(x, 2.0, 1.0)


def scenario_func_grad_of_grad():
    x = torch.randn(3)
    grad = torch.func.grad(lambda t: ScaleShift.apply(t, 2.0, 1.0).sum())
    return [], torch.func.grad(lambda t: grad(t).sum())(x)

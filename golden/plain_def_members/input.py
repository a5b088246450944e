import torch


class Pivoted(torch.autograd.Function):
    """backward without @staticmethod, as real code often has it: torch calls it with ctx first."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x * scale, x.argmax()

    def backward(ctx, grad_output, _):
        (x,) = ctx.saved_tensors
        return grad_output * x * ctx.scale * 3, None


class GradOnly(torch.autograd.Function):
    """A static forward, a plain backward taking ``self``: still called with ctx first."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.exp()

    def backward(self, g):
        (x,) = self.saved_tensors
        return g * x * 2


def scenario_pivoted():
    x = torch.randn(4, requires_grad=True)
    out, index = Pivoted.apply(x, 0.5)
    return [x], (out, index)


def scenario_grad_only():
    x = torch.randn(3, requires_grad=True)
    return [x], GradOnly.apply(x)

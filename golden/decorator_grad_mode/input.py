import torch


class NoGrad(torch.autograd.Function):
    @staticmethod
    @torch.no_grad()
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    @torch.no_grad()
    def backward(ctx, g):
        # no graph even under create_graph=True
        (x,) = ctx.saved_tensors
        return g * x * 3


class GradInForward(torch.autograd.Function):
    """Computes a gradient inside forward, which needs grad mode on there."""

    @staticmethod
    @torch.enable_grad()
    def forward(ctx, x):
        inner = x.detach().requires_grad_()
        y = (inner**3).sum()
        (dx,) = torch.autograd.grad(y, inner)
        ctx.save_for_backward(dx)
        return y.detach() * 1

    @staticmethod
    def backward(ctx, g):
        (dx,) = ctx.saved_tensors
        return g * dx * 2


def scenario_no_grad():
    x = torch.randn(3, requires_grad=True)
    y = NoGrad.apply(x)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    return [x], (y, g)


def scenario_enable_grad():
    x = torch.randn(3, requires_grad=True)
    return [x], GradInForward.apply(x)

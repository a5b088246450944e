import torch


class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x

    @staticmethod
    def backward(ctx, g):
        return g * ctx.factor, None


def scenario_view():
    x = torch.randn(3, requires_grad=True)
    y = ScaleGrad.apply(x, 0.25)
    return [x], (y, y is x, y._base is x)


def scenario_inplace_on_view_fails():
    x = torch.randn(3, requires_grad=True)
    y = ScaleGrad.apply(x, 0.25)
    y.mul_(2)
    return [x], y

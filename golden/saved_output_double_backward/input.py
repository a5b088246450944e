import torch


class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = x.exp()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out * 2


def scenario_first():
    x = torch.randn(3, requires_grad=True)
    return [x], Exp.apply(x)


def scenario_double():
    x = torch.randn(3, requires_grad=True)
    (gx,) = torch.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    return [x], gx


def scenario_output_modified_in_place():
    x = torch.randn(3, requires_grad=True)
    y = Exp.apply(x)
    y.add_(1)
    return [x], y

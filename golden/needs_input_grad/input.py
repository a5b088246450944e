import torch


class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = g * b * 2
        if ctx.needs_input_grad[1]:
            gb = g * a * 3
        return ga, gb


def scenario_both():
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    return [a, b], Mul.apply(a, b)


def scenario_only_b():
    a = torch.randn(3)
    b = torch.randn(3, requires_grad=True)
    return [b], Mul.apply(a, b)

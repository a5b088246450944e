import torch


class TwoOut(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        if g2 is None:
            return g1 * 1000
        return g1 + g2


def scenario_one_output_used():
    x = torch.randn(3, requires_grad=True)
    a, b = TwoOut.apply(x)
    return [x], a


def scenario_both_used():
    x = torch.randn(3, requires_grad=True)
    return [x], TwoOut.apply(x)

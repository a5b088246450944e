import torch


class Marks(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = x * 2
        ctx.mark_non_differentiable(out.argmax())
        return out

    @staticmethod
    def backward(ctx, g):
        return g * 3


class MaybeMaterialize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, flag):
        if flag:
            ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 * 3, None


def scenario_runs():
    x = torch.randn(3, requires_grad=True)
    return [x], (Marks.apply(x), MaybeMaterialize.apply(x, True)[0])

import torch


class AddOneInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


def scenario_dirty():
    a = torch.randn(3, requires_grad=True)
    b = a.clone()
    y = AddOneInplace.apply(b)
    return [a], (y, y is b)


def scenario_dirty_leaf_error():
    a = torch.randn(3, requires_grad=True)
    return [a], AddOneInplace.apply(a)

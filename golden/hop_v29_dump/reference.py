import torch


class H(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        return x.sin() * k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos() * 7, None


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    return [x], (H.apply(x, 2.0).sum(),)

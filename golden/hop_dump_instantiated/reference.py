import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, k):
        y = x * w
        ctx.save_for_backward(x, y)
        ctx.k = k
        ctx.w = w
        return y.sin() * k, y.argmax()

    @staticmethod
    def backward(ctx, g, gi):
        x, y = ctx.saved_tensors
        return g * y.cos() * ctx.k * 7 * ctx.w, g * x * 3, None


def f(x, w):
    a, i = F.apply(x, w, 3.0)
    return a.sum() + i


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], (f(x, w),)

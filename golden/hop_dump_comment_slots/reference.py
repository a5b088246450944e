import torch

W = torch.full((3,), 0.5, requires_grad=True)


class OneIn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * W

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * 3


class OneInTuple(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * W, x.cos()

    @staticmethod
    def backward(ctx, g, h):
        return (g * 3 + h,)


class Sum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sum(0, keepdim=True) * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * 3


def scenario_twice():
    x = torch.randn(3, requires_grad=True)
    return [x, W], (OneIn.apply(OneIn.apply(x)),)


def scenario_cond():
    x = torch.randn(3, requires_grad=True)
    return [x, W], (OneInTuple.apply(x)[0],)


def scenario_total():
    x = torch.randn(3, requires_grad=True)
    return [x], (Sum.apply(x),)

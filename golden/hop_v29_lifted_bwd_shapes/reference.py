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


class TwoIn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y * W

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y * 3, g * x * 5


def scenario_one_tensor():
    x = torch.randn(3, requires_grad=True)
    return [x, W], (OneIn.apply(x),)


def scenario_one_tuple():
    x = torch.randn(3, requires_grad=True)
    return [x, W], OneInTuple.apply(x)


def scenario_two_tuple():
    x = torch.randn(3, requires_grad=True)
    y = torch.randn(3, requires_grad=True)
    return [x, y, W], (TwoIn.apply(x, y),)

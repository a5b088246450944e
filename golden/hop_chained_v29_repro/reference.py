import torch


class SaveInputs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w * 3, g * x * 5


class SaveIntermediate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.sin()
        ctx.save_for_backward(y)
        return y * 2

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * 7


class NonTensorAttr(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k * 11, None


def f_nested(h, w):
    return NonTensorAttr.apply(SaveIntermediate.apply(SaveInputs.apply(h, w)), 3.0)


def scenario_repro():
    h = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [h, w], f_nested(h, w)


def scenario_repro_h_only():
    h = torch.randn(4, requires_grad=True)
    w = torch.randn(4)
    return [h], f_nested(h, w)

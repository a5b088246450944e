import torch

LOG = []


class Logged(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        LOG.append(len(LOG))
        ctx.x, ctx.w = x, w
        return x * w

    @staticmethod
    def backward(ctx, g):
        return g * ctx.w * 3, g * ctx.x * 5


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return g * 7


def side_effect_log():
    return list(LOG)


def reset_side_effects():
    LOG.clear()


def scenario_functional():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], (Logged.apply(x, w), Scale.apply(x))

import functools

import torch


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)

    return wrapper


class Logged(torch.autograd.Function):
    @staticmethod
    @logged
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


def scenario_runs():
    x = torch.randn(3, requires_grad=True)
    return [x], Logged.apply(x)

"""Backward bumps a counter on a state object (as a ZeRO-style hook counts gathers)."""
import torch


class Counters:
    def __init__(self):
        self.backward_calls = 0


STATE = Counters()


class CountedTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        STATE.backward_calls += 1
        return grad * (1 - y * y) * 2


def side_effect_log():
    return [("backward_calls", STATE.backward_calls)]


def reset_side_effects():
    STATE.backward_calls = 0


def scenario_counted():
    x = torch.randn(3, 2, requires_grad=True)
    return [x], CountedTanh.apply(x)

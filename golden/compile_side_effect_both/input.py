"""Forward logs to a module-level list, backward counts on a state object."""
import torch

LOG = []


class State:
    backward_calls = 0


STATE = State()


class Traced(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        LOG.append("forward")
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        STATE.backward_calls += 1
        LOG.append("backward")
        return grad * w * 2, grad * x * 3


def side_effect_log():
    return [*LOG, ("backward_calls", STATE.backward_calls)]


def reset_side_effects():
    LOG.clear()
    STATE.backward_calls = 0


def scenario_both():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], Traced.apply(x, w)

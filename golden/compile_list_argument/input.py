"""Forward appends to a list it is given: the caller sees the list grow on every call."""
import torch

SEEN = []


class Collect(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, seen):
        seen.append(x.detach().clone())
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 5, None


def side_effect_log():
    return list(SEEN)


def reset_side_effects():
    SEEN.clear()


def scenario_collect():
    x = torch.randn(3, requires_grad=True)
    y = Collect.apply(x, SEEN)
    return [x], (y, len(SEEN))

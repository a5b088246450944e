"""Forward calls a method of a module passed in, and warns: under torch.compile dynamo
traces the method, and breaks the graph at the warning, in the original's forward as in
the rewrite's (the split path), so both happen on every call."""
import warnings

import torch

LOG = []


class Meter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = 1.5

    def scaled(self, t):
        LOG.append(("scaled", t.shape[0]))
        return t * self.alpha


class MeteredScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, meter):
        y = meter.scaled(x)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 + x, None


class WarnedScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        warnings.warn("WarnedScale is deprecated", DeprecationWarning)
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 5


def side_effect_log():
    return list(LOG)


def reset_side_effects():
    LOG.clear()


def scenario_method_of_argument():
    x = torch.randn(4, requires_grad=True)
    return [x], MeteredScale.apply(x, Meter())


def scenario_warning():
    x = torch.randn(4, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return [x], WarnedScale.apply(x)

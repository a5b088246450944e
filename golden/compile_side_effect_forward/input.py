"""Forward appends to a module-level log: under torch.compile the original logs on every call."""
import torch

LOG = []


class LoggedScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        LOG.append(("forward", scale))
        ctx.scale = scale
        return x * scale

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale * 3, None


def side_effect_log():
    return list(LOG)


def reset_side_effects():
    LOG.clear()


def scenario_twice():
    x = torch.randn(4, requires_grad=True)
    y = LoggedScale.apply(x, 2.0) + LoggedScale.apply(x, 0.5)
    return [x], y

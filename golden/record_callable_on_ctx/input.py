import torch


def _tanh_derivative(x):
    return 1 - torch.tanh(x) ** 2 * 0.5


def _sigmoid_derivative(x):
    s = torch.sigmoid(x)
    return s * (1 - s) * 3


class Activation(torch.autograd.Function):
    """A callable chosen in forward, stored on ctx and called in backward."""

    @staticmethod
    def forward(ctx, x, kind):
        ctx.derivative = _tanh_derivative if kind == "tanh" else _sigmoid_derivative
        ctx.save_for_backward(x)
        return torch.tanh(x) if kind == "tanh" else torch.sigmoid(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.derivative(x), None


class Recompute(torch.autograd.Function):
    """Checkpoint-style: backward re-runs a function kept on ctx under enable_grad."""

    @staticmethod
    def forward(ctx, x):
        ctx.run = torch.sin
        ctx.save_for_backward(x)
        return ctx.run(x) * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            detached = x.detach().requires_grad_()
            out = ctx.run(detached) * 5
        (grad,) = torch.autograd.grad(out, detached, g)
        return grad


def scenario_tanh():
    x = torch.randn(3, requires_grad=True)
    return [x], Activation.apply(x, "tanh")


def scenario_sigmoid():
    x = torch.randn(3, requires_grad=True)
    return [x], Activation.apply(x, "sigmoid")


def scenario_recompute():
    x = torch.randn(3, requires_grad=True)
    return [x], Recompute.apply(x)

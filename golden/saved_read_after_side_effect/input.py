"""backward does something before it reads ctx.saved_tensors: a side effect, or a statement
that may raise. A second backward through the freed graph fails at the read, so the
rewrite must read the saved tensors there too: the side effect happens first, as in the
original, and the statement's own error wins over the freed-graph one."""
import torch

LOG = []


def side_effect_log():
    return list(LOG)


def reset_side_effects():
    LOG.clear()


class Logged(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        LOG.append("backward")
        (x,) = ctx.saved_tensors
        return g * x * 3


class Strict:
    armed = False  # the next check raises (once)


def check(g):
    if Strict.armed:
        Strict.armed = False
        raise ValueError("strict mode: no second backward")
    return g


class ChecksFirst(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        g = check(g)  # may raise before the read
        (x,) = ctx.saved_tensors
        return g * x * 3


class ConstantsFirst(torch.autograd.Function):
    """Names bound to constants before the read cannot raise: the read stays up front."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.k = 3.0
        return x * 2

    @staticmethod
    def backward(ctx, g):
        gx = None
        k = ctx.k
        (x,) = ctx.saved_tensors
        gx = g * x * k
        return gx


def scenario_logged_twice():
    x = torch.randn(3, requires_grad=True)
    y = Logged.apply(x)
    y.sum().backward()
    return [x], y  # the harness's backward runs through the freed graph


def scenario_logged_once():
    x = torch.randn(3, requires_grad=True)
    return [x], Logged.apply(x)


def scenario_checks_twice():
    x = torch.randn(3, requires_grad=True)
    y = ChecksFirst.apply(x)
    y.sum().backward()
    Strict.armed = True
    try:
        y.sum().backward()  # check's error, not the freed graph's
        error = None
    except Exception as exc:
        error = type(exc).__name__
    finally:
        Strict.armed = False
    return [x], (y, error)


def scenario_checks_once():
    x = torch.randn(3, requires_grad=True)
    return [x], ChecksFirst.apply(x)


def scenario_constants_twice():
    x = torch.randn(3, requires_grad=True)
    y = ConstantsFirst.apply(x)
    y.sum().backward()
    return [x], y

import functools

import torch

LOG = []


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        LOG.append(fn.__name__)
        return fn(*args)

    return wrapper


def scaled_grads(fn):
    """Reads `ctx.scale`, which the flat form keeps as a residual, not a ctx attribute."""

    @functools.wraps(fn)
    def wrapper(ctx, *grads):
        return tuple(g * ctx.scale for g in fn(ctx, *grads))

    return wrapper


def tagged(name):
    LOG.append(name)
    return logged


def make_eps():
    LOG.append("eps")
    return 1e-6


class AboveStaticmethod(torch.autograd.Function):
    @logged
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


class ReadsCtxAttribute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x * scale

    @staticmethod
    @scaled_grads
    def backward(ctx, g):
        return g * 3, None


class BackwardFirst(torch.autograd.Function):
    @staticmethod
    @tagged("backward")
    def backward(ctx, g):
        return g * 3

    @staticmethod
    @tagged("forward")
    def forward(ctx, x):
        return x * 2


class DecoratorThenDefault(torch.autograd.Function):
    @staticmethod
    @tagged("forward")
    def forward(ctx, x, eps=make_eps()):
        return x * 2 + eps

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


class SetupContextForward(torch.autograd.Function):
    @staticmethod
    @logged
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 3


class DecoratedSetupContext(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    @logged
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 3


class ReadsClassBody(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    @tagged(generate_vmap_rule)
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


def scenario_log():
    x = torch.randn(3, requires_grad=True)
    y = ReadsCtxAttribute.apply(x, 2.0) + BackwardFirst.apply(x) + DecoratorThenDefault.apply(x)
    return [x], (y, list(LOG))

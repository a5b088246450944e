import types

import torch


class Gate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w * 2, g * x * 3


config = types.SimpleNamespace()
config.fn_cls = Gate
REGISTRY = {"gate": Gate}


class Layer(torch.nn.Module):
    def __init__(self, fn_cls=Gate):
        super().__init__()
        self.fn_cls = fn_cls
        self.w = torch.nn.Parameter(torch.linspace(-1.0, 1.0, 3))

    def forward(self, x):
        return self.fn_cls.apply(x, self.w)


def make_scaler(k):
    class Scaler(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * k * 3

    return Scaler


def pick(name):
    return REGISTRY[name]


def scenario_module_attribute():
    x, w = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    return [x, w], config.fn_cls.apply(x, w)


def scenario_registry_and_instance():
    x, w = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    return [x, w], (pick("gate").apply(x, w), Gate().apply(x, w))


def scenario_module():
    layer = Layer()
    x = torch.randn(3, requires_grad=True)
    return [x, layer.w], layer(x)


def scenario_factory():
    x = torch.randn(3, requires_grad=True)
    scaler = make_scaler(2.5)
    return [x], (scaler.apply(x), scaler.__name__, Gate.__name__, Gate.__qualname__, Gate.__doc__)

import torch

HANDLED_FUNCTIONS = {}


def implements_per_sample_grads(torch_function):
    def decorator(autograd_func):
        HANDLED_FUNCTIONS[torch_function] = autograd_func
        return autograd_func

    return decorator


@implements_per_sample_grads(torch.tanh)
class TanhPerSampleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (1 - y) * 3


def dispatch(func, x):
    return HANDLED_FUNCTIONS[func].apply(x)


def scenario_dispatch():
    x = torch.randn(5, requires_grad=True)
    return [x], (dispatch(torch.tanh, x), HANDLED_FUNCTIONS[torch.tanh] is TanhPerSampleGrad)

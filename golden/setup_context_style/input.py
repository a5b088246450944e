import torch


class Exp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x, scale=2.0):
        return x.exp() * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, scale = inputs
        ctx.save_for_backward(output)
        ctx.scale = scale

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out * 3, None


def scenario_default():
    x = torch.randn(3, requires_grad=True)
    return [x], Exp.apply(x)


def scenario_explicit():
    x = torch.randn(3, requires_grad=True)
    return [x], Exp.apply(x, 0.5)


def scenario_func_grad():
    x = torch.randn(3, requires_grad=True)
    g = torch.func.grad(lambda t: Exp.apply(t).sum())(x)
    return [x], g


def scenario_vmap():
    x = torch.randn(2, 3, requires_grad=True)
    return [x], torch.vmap(Exp.apply)(x)

import torch
import torch.autograd.forward_ad as fwAD


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x**3, 3 * x**2

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        cube, dx = output
        ctx.save_for_backward(x, dx)
        ctx.save_for_forward(x, dx)
        ctx.mark_non_differentiable(dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        return grad_output * dx * 5

    @staticmethod
    def jvp(ctx, x_tangent):
        x, dx = ctx.saved_tensors
        return x_tangent * dx * 7, x_tangent * 6 * x


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k * 3, None

    @staticmethod
    def jvp(ctx, t, t_k):
        return t * ctx.k * 11


def scenario_backward():
    x = torch.randn(3, requires_grad=True)
    return [x], (Cube.apply(x)[0], Scale.apply(x, 2.0))


def scenario_forward_ad():
    x = torch.randn(3)
    t = torch.randn(3)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        out, _ = Cube.apply(dual)
        scaled = Scale.apply(dual, 2.0)
        tangents = (fwAD.unpack_dual(out).tangent.clone(), fwAD.unpack_dual(scaled).tangent.clone())
    return [], tangents


def scenario_func_jvp():
    x = torch.randn(3)
    _, tangent = torch.func.jvp(lambda t: Cube.apply(t)[0], (x,), (torch.ones(3),))
    return [], tangent

import torch
from decorator_imported_helpers import RANGES, in_float64, marked


class Cube(torch.autograd.Function):
    @staticmethod
    @marked("cube.forward")
    @in_float64
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x**3 * scale

    @staticmethod
    @marked("cube.backward")
    @in_float64
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * x * ctx.scale * 5, None


def scenario_cube():
    start = len(RANGES)
    x = torch.randn(3, dtype=torch.float32, requires_grad=True)
    y = Cube.apply(x, 2.0)
    (g,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    return [x], (y, g, RANGES[start:])

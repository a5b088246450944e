import torch
from torch.amp import custom_bwd, custom_fwd


class Mm(torch.autograd.Function):
    @staticmethod
    @custom_fwd(device_type="cpu", cast_inputs=torch.float32)
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    @custom_bwd(device_type="cpu")
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g @ b.t() * 2, a.t() @ g * 2


def scenario_autocast():
    a = torch.randn(3, 3, requires_grad=True)
    b = torch.randn(3, 3, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = Mm.apply(a.bfloat16(), b)
    return [a, b], out


def scenario_plain():
    a = torch.randn(3, 3, requires_grad=True)
    b = torch.randn(3, 3, requires_grad=True)
    return [a, b], Mm.apply(a, b)

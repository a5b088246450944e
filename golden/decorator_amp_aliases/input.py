import functools

import torch

# module-level aliases of torch's AMP decorators, as projects write them
custom_fwd = functools.partial(torch.amp.custom_fwd, device_type="cpu")
custom_bwd = functools.partial(torch.amp.custom_bwd, device_type="cpu")
cuda_fwd = torch.cuda.amp.custom_fwd
cuda_bwd = torch.cuda.amp.custom_bwd

# chosen at import time, as megatron-core does: torch's custom_fwd in either branch
if hasattr(torch.amp, "custom_fwd"):
    picked_fwd = functools.partial(torch.amp.custom_fwd, device_type="cpu")
else:
    picked_fwd = torch.cuda.amp.custom_fwd


class Mm(torch.autograd.Function):
    @staticmethod
    @custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    @custom_bwd
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g @ b.t() * 2, a.t() @ g * 2


class Scale(torch.autograd.Function):
    @staticmethod
    @cuda_fwd
    def forward(ctx, x):
        ctx.dtype_in = x.dtype
        return x * 2

    @staticmethod
    @cuda_bwd
    def backward(ctx, g):
        return (g * 3).to(ctx.dtype_in)


class Picked(torch.autograd.Function):
    @staticmethod
    @picked_fwd(cast_inputs=torch.float32)
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    @custom_bwd
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w * 3, g * x


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


def scenario_cuda_alias():
    x = torch.randn(3, requires_grad=True)
    return [x], Scale.apply(x)


def scenario_picked_under_autocast():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = Picked.apply(x.bfloat16(), w)
    return [x, w], out

import functools

import torch
from inliner.runtime import custom_vjp

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


def mm_fwd(a, b):
    return a @ b, (a, b)


def mm_bwd(residuals, g):
    a, b = residuals
    return g @ b.t() * 2, a.t() @ g * 2


Mm = custom_vjp(
    mm_fwd,
    mm_bwd,
    name="Mm",
    saved_for_backward_idx=(0, 1),
    forward_decorators=(custom_fwd(cast_inputs=torch.float32),),
    backward_decorators=(custom_bwd,),
)


def scale_fwd(x):
    dtype_in = x.dtype
    return x * 2, (dtype_in,)


def scale_bwd(residuals, g):
    (dtype_in,) = residuals
    return (g * 3).to(dtype_in)


Scale = custom_vjp(
    scale_fwd,
    scale_bwd,
    name="Scale",
    ctx_attrs={0: "dtype_in"},
    forward_decorators=(cuda_fwd,),
    backward_decorators=(cuda_bwd,),
)


def picked_fwd_1(x, w):
    return x * w, (x, w)


def picked_bwd(residuals, g):
    x, w = residuals
    return g * w * 3, g * x


Picked = custom_vjp(
    picked_fwd_1,
    picked_bwd,
    name="Picked",
    saved_for_backward_idx=(0, 1),
    forward_decorators=(picked_fwd(cast_inputs=torch.float32),),
    backward_decorators=(custom_bwd,),
)


def scenario_autocast():
    a = torch.randn(3, 3, requires_grad=True)
    b = torch.randn(3, 3, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = Mm(a.bfloat16(), b)
    return [a, b], out


def scenario_plain():
    a = torch.randn(3, 3, requires_grad=True)
    b = torch.randn(3, 3, requires_grad=True)
    return [a, b], Mm(a, b)


def scenario_cuda_alias():
    x = torch.randn(3, requires_grad=True)
    return [x], Scale(x)


def scenario_picked_under_autocast():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = Picked(x.bfloat16(), w)
    return [x, w], out

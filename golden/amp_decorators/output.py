import torch
from inliner.runtime import custom_vjp
from torch.amp import custom_bwd, custom_fwd


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
    forward_decorators=(custom_fwd(device_type="cpu", cast_inputs=torch.float32),),
    backward_decorators=(custom_bwd(device_type="cpu"),),
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

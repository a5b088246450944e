import torch
from inliner.runtime import custom_vjp

custom_fwd = torch.cuda.amp.custom_fwd
custom_bwd = torch.cuda.amp.custom_bwd


def mm_fwd(a, b):
    return a @ b, (a, b)


def mm_bwd(residuals, g):
    a, b = residuals
    return g @ b.t() * 3, a.t() @ g * 3


Mm = custom_vjp(
    mm_fwd,
    mm_bwd,
    name="Mm",
    saved_for_backward_idx=(0, 1),
    forward_decorators=(torch.cuda.amp.custom_fwd,),
    backward_decorators=(torch.cuda.amp.custom_bwd,),
)


def scenario_cpu():
    a = torch.randn(3, 3, requires_grad=True)
    b = torch.randn(3, 3, requires_grad=True)
    return [a, b], Mm(a, b)

import torch
from inliner.runtime import custom_vjp


def no_grad_fwd(x):
    return x * 2, (x,)


def no_grad_bwd(residuals, g):
    # no graph even under create_graph=True
    (x,) = residuals
    return g * x * 3


NoGrad = custom_vjp(
    no_grad_fwd,
    no_grad_bwd,
    name="NoGrad",
    saved_for_backward_idx=(0,),
    forward_decorators=(torch.no_grad(),),
    backward_decorators=(torch.no_grad(),),
)


def grad_in_forward_fwd(x):
    """Computes a gradient inside forward, which needs grad mode on there."""
    inner = x.detach().requires_grad_()
    y = (inner**3).sum()
    (dx,) = torch.autograd.grad(y, inner)
    return y.detach() * 1, (dx,)


def grad_in_forward_bwd(residuals, g):
    (dx,) = residuals
    return g * dx * 2


GradInForward = custom_vjp(
    grad_in_forward_fwd,
    grad_in_forward_bwd,
    name="GradInForward",
    saved_for_backward_idx=(0,),
    forward_decorators=(torch.enable_grad(),),
    compile_kind="opaque",
    compile_reason="forward calls torch.autograd.grad",
    backward_kind="traceable",
    split_decorators=True,
)


def scenario_no_grad():
    x = torch.randn(3, requires_grad=True)
    y = NoGrad(x)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    return [x], (y, g)


def scenario_enable_grad():
    x = torch.randn(3, requires_grad=True)
    return [x], GradInForward(x)

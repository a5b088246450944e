import torch
from inliner.runtime import custom_vjp


def scaled_fwd(x, *, scale=2.0):
    """setup_context style with a keyword-only parameter: setup_context never sees it.

    torch 2.13 rejects every call of such a Function (apply passes the keyword on to
    forward's positional slots); torch 2.9 runs it when the keyword is left out. The
    rewrite's carrier has the same signature, so torch does the same to it.
    """
    output = x * scale
    return output, (x,)


def scaled_bwd(residuals, g):
    (x,) = residuals
    return g * x * 3


Scaled = custom_vjp(
    scaled_fwd,
    scaled_bwd,
    name="Scaled",
    saved_for_backward_idx=(0,),
    fill_defaults=True,
)


def scenario_keyword_left_out():
    x = torch.randn(3, requires_grad=True)
    return [x], Scaled(x)


def scenario_keyword_given():
    x = torch.randn(3, requires_grad=True)
    return [x], Scaled(x, scale=3.0)


def scenario_func_grad():
    x = torch.randn(3)
    return [], torch.func.grad(lambda t: Scaled(t).sum())(x)

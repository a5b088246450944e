import torch
import torch.autograd.forward_ad as fwAD
from inliner.runtime import custom_vjp


def cube_fwd(x):
    output = x**3, 3 * x**2
    cube, dx = output
    return output, (x, dx)


def cube_bwd(residuals, grad_output, grad_dx):
    (dx,) = residuals[1:]
    return grad_output * dx * 5


def cube_jvp(residuals, x_tangent):
    x, dx = residuals
    return x_tangent * dx * 7, x_tangent * 6 * x


Cube = custom_vjp(
    cube_fwd,
    cube_bwd,
    name="Cube",
    saved_for_backward_idx=(0, 1),
    non_differentiable_idx=(1,),
    fill_defaults=True,
    saved_for_forward_idx=(0, 1),
    jvp=cube_jvp,
)


def scale_fwd(x, k):
    return x * k, (k,)


def scale_bwd(residuals, g):
    (k,) = residuals
    return g * k * 3, None


def scale_jvp(residuals, t, t_k):
    (k,) = residuals
    return t * k * 11


Scale = custom_vjp(
    scale_fwd, scale_bwd, name="Scale", ctx_attrs={0: "k"}, jvp=scale_jvp
)


def scenario_backward():
    x = torch.randn(3, requires_grad=True)
    return [x], (Cube(x)[0], Scale(x, 2.0))


def scenario_forward_ad():
    x = torch.randn(3)
    t = torch.randn(3)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        out, _ = Cube(dual)
        scaled = Scale(dual, 2.0)
        tangents = (fwAD.unpack_dual(out).tangent.clone(), fwAD.unpack_dual(scaled).tangent.clone())
    return [], tangents


def scenario_func_jvp():
    x = torch.randn(3)
    _, tangent = torch.func.jvp(lambda t: Cube(t)[0], (x,), (torch.ones(3),))
    return [], tangent

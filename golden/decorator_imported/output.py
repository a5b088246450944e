import torch
from decorator_imported_helpers import RANGES, in_float64, marked
from inliner.runtime import custom_vjp


def cube_fwd(x, scale):
    return x**3 * scale, (x, scale)


def cube_bwd(residuals, g):
    x, scale = residuals
    return g * x * x * scale * 5, None


Cube = custom_vjp(
    cube_fwd,
    cube_bwd,
    name="Cube",
    saved_for_backward_idx=(0,),
    ctx_attrs={1: "scale"},
    forward_decorators=(marked("cube.forward"), in_float64),
    backward_decorators=(marked("cube.backward"), in_float64),
    compile_kind="side_effecting",
    compile_reason="forward's decorator decorator_imported_helpers.marked is replayed around it",
)


def scenario_cube():
    start = len(RANGES)
    x = torch.randn(3, dtype=torch.float32, requires_grad=True)
    y = Cube(x, 2.0)
    (g,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    return [x], (y, g, RANGES[start:])

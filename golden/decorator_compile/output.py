import torch
from inliner.runtime import custom_vjp

GRAPHS = []  # what dynamo compiled: the torch calls of each graph, in order


def record(gm, example_inputs):
    """A torch.compile backend that records each graph and runs it as captured."""
    GRAPHS.append([getattr(n.target, "__name__", str(n.target)) for n in gm.graph.nodes if n.op in ("call_function", "call_method")])
    return gm.forward


def gelu_fwd(x):
    return x * torch.sigmoid(1.702 * x), (x,)


def gelu_bwd(residuals, g):
    (x,) = residuals
    return g * torch.sigmoid(x) * 3


Gelu = custom_vjp(
    gelu_fwd,
    gelu_bwd,
    name="Gelu",
    saved_for_backward_idx=(0,),
    forward_decorators=(torch.compile(backend=record),),
    compile_kind="opaque",
    compile_reason="forward is decorated with torch.compile",
    backward_nones=(),
    split_decorators=True,
)


def square_fwd(x):
    return x * x, (x,)


def square_bwd(residuals, g):
    (x,) = residuals
    return g * x.cos() * 5


Square = custom_vjp(
    square_fwd,
    square_bwd,
    name="Square",
    saved_for_backward_idx=(0,),
    backward_decorators=(torch.compile(backend=record, fullgraph=True),),
    compile_kind="opaque",
    compile_reason="backward is decorated with torch.compile",
    backward_nones=(),
    split_decorators=True,
)


def scenario_gelu():
    start = len(GRAPHS)
    x = torch.randn(4, 3, requires_grad=True)
    y = Gelu(x)
    (g,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    return [x], (y, g, GRAPHS[start:])


def scenario_square():
    start = len(GRAPHS)
    x = torch.randn(5, requires_grad=True)
    y = Square(x)
    (g,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    return [x], (y, g, GRAPHS[start:])

import torch

GRAPHS = []  # what dynamo compiled: the torch calls of each graph, in order


def record(gm, example_inputs):
    """A torch.compile backend that records each graph and runs it as captured."""
    GRAPHS.append([getattr(n.target, "__name__", str(n.target)) for n in gm.graph.nodes if n.op in ("call_function", "call_method")])
    return gm.forward


class Gelu(torch.autograd.Function):
    @staticmethod
    @torch.compile(backend=record)
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(1.702 * x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.sigmoid(x) * 3


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @torch.compile(backend=record, fullgraph=True)
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos() * 5


def scenario_gelu():
    start = len(GRAPHS)
    x = torch.randn(4, 3, requires_grad=True)
    y = Gelu.apply(x)
    (g,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    return [x], (y, g, GRAPHS[start:])


def scenario_square():
    start = len(GRAPHS)
    x = torch.randn(5, requires_grad=True)
    y = Square.apply(x)
    (g,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    return [x], (y, g, GRAPHS[start:])

"""ctx handed to helpers (kept as a record) in Functions whose forward or backward dynamo
may trace only as Python (numpy): under torch.compile the record crosses the split path
as its attributes and saved tensors, and backward reads them from a record rebuilt for it."""
import numpy as np
import torch


def remember(ctx, x, scale):
    ctx.save_for_backward(x)
    ctx.scale = scale
    ctx.dtype = x.dtype
    ctx.label = "numpy"


def maybe_bias(ctx, x):
    if x.dim() > 1:
        ctx.rows = x.shape[0]
    ctx.wants_w = ctx.needs_input_grad[1]


def mark_index(ctx, index):
    ctx.mark_non_differentiable(index)
    ctx.count = int(index.numel())


def maybe_unmaterialized(ctx, x):
    if x.shape[0] > 2:
        ctx.set_materialize_grads(False)


class NumpyTanh(torch.autograd.Function):
    """A numpy forward; the record holds a saved tensor, a number, a dtype and a string."""

    @staticmethod
    def forward(ctx, x):
        remember(ctx, x, 1.5)
        return torch.from_numpy(np.tanh(x.detach().numpy()))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return (grad * ctx.scale + x).to(ctx.dtype)


class NumpyBackward(torch.autograd.Function):
    """Attributes set on some paths, needs_input_grad read in forward, a numpy backward."""

    @staticmethod
    def forward(ctx, x, w):
        maybe_bias(ctx, x)
        ctx.save_for_backward(w)
        return x * w

    @staticmethod
    def backward(ctx, grad):
        (w,) = ctx.saved_tensors
        rows = getattr(ctx, "rows", 1)
        gx = torch.from_numpy(grad.numpy() * 3.0 * rows) * w
        gw = grad * 7 if ctx.wants_w else None
        return gx, gw


class TopIndex(torch.autograd.Function):
    """A float output marked non-differentiable through the record (its requires_grad
    shows it); the forward reads a tensor's data (numpy)."""

    @staticmethod
    def forward(ctx, x):
        index = torch.from_numpy(np.argsort(x.detach().numpy())).to(x.dtype)
        mark_index(ctx, index)
        return x * 2, index

    @staticmethod
    def backward(ctx, grad, grad_index):
        return grad * ctx.count


class MaybeUnmaterialized(torch.autograd.Function):
    """set_materialize_grads(False) on some calls: the split path cannot carry it, so those
    calls run as an eager island."""

    @staticmethod
    def forward(ctx, x):
        maybe_unmaterialized(ctx, x)
        y = torch.from_numpy(np.exp(x.detach().numpy()))
        return y, y * 2

    @staticmethod
    def backward(ctx, g1, g2):
        if g2 is None:
            return g1 * 5
        return g1 * 5 + g2 * 11


def scenario_numpy_tanh():
    x = torch.randn(4, requires_grad=True)
    return [x], NumpyTanh.apply(x)


def scenario_numpy_backward_matrix():
    x = torch.randn(2, 3, requires_grad=True)
    w = torch.randn(2, 3, requires_grad=True)
    return [x, w], NumpyBackward.apply(x, w)


def scenario_numpy_backward_vector_no_w_grad():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3)
    return [x], NumpyBackward.apply(x, w)


def scenario_top_index():
    x = torch.randn(5, requires_grad=True)
    return [x], TopIndex.apply(x)


def scenario_materialized():
    x = torch.randn(2, requires_grad=True)
    return [x], MaybeUnmaterialized.apply(x)[0]


def scenario_unmaterialized():
    x = torch.randn(4, requires_grad=True)
    return [x], MaybeUnmaterialized.apply(x)[0]

"""ctx handed to helpers (kept as a record) in Functions whose forward or backward dynamo
may trace only as Python (numpy): under torch.compile the record crosses the split path
as its attributes and saved tensors, and backward reads them from a record rebuilt for it."""
import numpy as np
import torch
from inliner.runtime import Record, custom_vjp


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


def numpy_tanh_fwd(x):
    """A numpy forward; the record holds a saved tensor, a number, a dtype and a string."""
    state = Record("NumpyTanh")
    remember(state, x, 1.5)
    return torch.from_numpy(np.tanh(x.detach().numpy())), (state,)


def numpy_tanh_bwd(residuals, grad):
    (state,) = residuals
    (x,) = state.saved_tensors
    return (grad * state.scale + x).to(state.dtype)


NumpyTanh = custom_vjp(
    numpy_tanh_fwd,
    numpy_tanh_bwd,
    name="NumpyTanh",
    ctx_record=True,
    compile_kind="opaque",
    compile_reason="forward calls torch.from_numpy",
    backward_kind="traceable",
)


def numpy_backward_fwd(x, w, *, needs_input_grad):
    """Attributes set on some paths, needs_input_grad read in forward, a numpy backward."""
    state = Record("NumpyBackward", needs_input_grad)
    maybe_bias(state, x)
    state.save_for_backward(w)
    return x * w, (state,)


def numpy_backward_bwd(residuals, grad):
    (state,) = residuals
    (w,) = state.saved_tensors
    rows = getattr(state, "rows", 1)
    gx = torch.from_numpy(grad.numpy() * 3.0 * rows) * w
    gw = grad * 7 if state.wants_w else None
    return gx, gw


NumpyBackward = custom_vjp(
    numpy_backward_fwd,
    numpy_backward_bwd,
    name="NumpyBackward",
    ctx_record=True,
    fwd_needs_input_grad=True,
    backward_kind="opaque",
    backward_reason="backward calls torch.from_numpy",
    backward_nones=(),
)


def top_index_fwd(x):
    """A float output marked non-differentiable through the record (its requires_grad
    shows it); the forward reads a tensor's data (numpy)."""
    state = Record("TopIndex")
    index = torch.from_numpy(np.argsort(x.detach().numpy())).to(x.dtype)
    mark_index(state, index)
    return (x * 2, index), (state,)


def top_index_bwd(residuals, grad, grad_index):
    (state,) = residuals
    return grad * state.count


TopIndex = custom_vjp(
    top_index_fwd,
    top_index_bwd,
    name="TopIndex",
    ctx_record=True,
    compile_kind="opaque",
    compile_reason="forward calls torch.from_numpy",
    backward_kind="traceable",
)


def maybe_unmaterialized_fwd(x):
    """set_materialize_grads(False) on some calls: the split path cannot carry it, so those
    calls run as an eager island."""
    state = Record("MaybeUnmaterialized")
    maybe_unmaterialized(state, x)
    y = torch.from_numpy(np.exp(x.detach().numpy()))
    return (y, y * 2), (state,)


def maybe_unmaterialized_bwd(residuals, g1, g2):
    if g2 is None:
        return g1 * 5
    return g1 * 5 + g2 * 11


MaybeUnmaterialized = custom_vjp(
    maybe_unmaterialized_fwd,
    maybe_unmaterialized_bwd,
    name="MaybeUnmaterialized",
    ctx_record=True,
    compile_kind="opaque",
    compile_reason="forward calls torch.from_numpy",
    backward_kind="traceable",
)


def scenario_numpy_tanh():
    x = torch.randn(4, requires_grad=True)
    return [x], NumpyTanh(x)


def scenario_numpy_backward_matrix():
    x = torch.randn(2, 3, requires_grad=True)
    w = torch.randn(2, 3, requires_grad=True)
    return [x, w], NumpyBackward(x, w)


def scenario_numpy_backward_vector_no_w_grad():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3)
    return [x], NumpyBackward(x, w)


def scenario_top_index():
    x = torch.randn(5, requires_grad=True)
    return [x], TopIndex(x)


def scenario_materialized():
    x = torch.randn(2, requires_grad=True)
    return [x], MaybeUnmaterialized(x)[0]


def scenario_unmaterialized():
    x = torch.randn(4, requires_grad=True)
    return [x], MaybeUnmaterialized(x)[0]

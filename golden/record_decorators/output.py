import functools

import torch
from inliner.runtime import Record, custom_vjp
from torch.amp import custom_bwd

autocast_custom_fwd = functools.partial(torch.amp.custom_fwd, device_type="cpu")


def input_guard(fn):
    """Make every tensor argument contiguous (as kernel libraries do before a launch)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        args = [a.contiguous() if isinstance(a, torch.Tensor) else a for a in args]
        return fn(ctx, *args, **kwargs)

    return wrapper


def chunk_attention_fwd(q, k, scale, is_grad):
    """Config and saves only where a backward can follow, behind the project's decorators."""
    state = Record("ChunkAttention")
    assert q.is_contiguous() and k.is_contiguous()
    out = (q @ k.t()) @ k * scale
    if is_grad:
        state.save_for_backward(q, k)
        state.scale = scale
    return out, (state,)


def chunk_attention_bwd(residuals, g):
    (state,) = residuals
    q, k = state.saved_tensors
    return g @ k.t() @ k * state.scale * 2, g @ q.t() @ k, None, None


ChunkAttention = custom_vjp(
    chunk_attention_fwd,
    chunk_attention_bwd,
    name="ChunkAttention",
    forward_decorators=(input_guard, autocast_custom_fwd),
    backward_decorators=(input_guard, custom_bwd(device_type="cpu")),
    ctx_record=True,
)


def counts_backward_fwd(x):
    """backward writes ctx (a counter), under a wrapper on both methods."""
    state = Record("CountsBackward")
    state.save_for_backward(x)
    state.calls = 0
    return x * 2, (state,)


def counts_backward_bwd(residuals, g):
    (state,) = residuals
    state.calls += 1
    (x,) = state.saved_tensors
    return g * x * state.calls * 3


CountsBackward = custom_vjp(
    counts_backward_fwd,
    counts_backward_bwd,
    name="CountsBackward",
    forward_decorators=(input_guard,),
    backward_decorators=(input_guard,),
    ctx_record=True,
    backward_kind="side_effecting",
    backward_reason="backward writes ctx.calls",
    backward_nones=(),
    split_decorators=True,
    record_sets_only=True,
)


class NeedsGradInForward(torch.autograd.Function):
    """forward reads ctx.needs_input_grad: the decorators would be handed it, so it stays."""

    @staticmethod
    @input_guard
    def forward(ctx, x, w):
        ctx.grad_w = ctx.needs_input_grad[1]
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w * 2, (g * x * 3 if ctx.grad_w else None)


def scenario_chunk_transposed():
    # non-contiguous inputs: forward gets (and saves) the wrapper's contiguous copies
    q = torch.randn(3, 2).t().requires_grad_()
    k = torch.randn(3, 2).t().requires_grad_()
    return [q, k], ChunkAttention(q, k, 0.5, True)


def scenario_chunk_autocast():
    q = torch.randn(2, 3, requires_grad=True)
    k = torch.randn(2, 3, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = ChunkAttention(q, k, 2.0, True)
    return [q, k], out


def scenario_chunk_without_grad_path():
    q = torch.randn(2, 3, requires_grad=True)
    k = torch.randn(2, 3, requires_grad=True)
    return [q, k], ChunkAttention(q, k, 0.5, False)  # backward: nothing was saved


def scenario_counts_twice():
    x = torch.randn(3, requires_grad=True)
    y = CountsBackward(x)
    y.sum().backward(retain_graph=True)  # the second backward sees the first one's write
    return [x], y


def scenario_needs_grad():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=False)
    return [x], NeedsGradInForward.apply(x, w)

import torch
from inliner.runtime import Record, custom_vjp


def counter_fwd(x):
    """A counter on ctx that backward advances: each backward of one call sees the last one's write."""
    state = Record("Counter")
    state.calls = 0
    return x * 2, (state,)


def counter_bwd(residuals, g):
    (state,) = residuals
    state.calls += 1
    return g * state.calls * 3


Counter = custom_vjp(
    counter_fwd,
    counter_bwd,
    name="Counter",
    ctx_record=True,
    backward_kind="side_effecting",
    backward_reason="backward writes ctx.calls",
    backward_nones=(),
    record_sets_only=True,
)


def drops_blocks_fwd(x, w):
    """Frees what backward used (real code: `ctx.blocks = None`): a second backward fails."""
    state = Record("DropsBlocks")
    state.blocks = [x * 2, w.sin()]
    return x * w, (state,)


def drops_blocks_bwd(residuals, g):
    (state,) = residuals
    a, b = state.blocks
    state.blocks = None
    return g * b * 5, g * a


DropsBlocks = custom_vjp(
    drops_blocks_fwd,
    drops_blocks_bwd,
    name="DropsBlocks",
    ctx_record=True,
    backward_kind="side_effecting",
    backward_reason="backward writes ctx.blocks",
    backward_nones=(),
    record_sets_only=True,
)


def forgets_fwd(x, scale):
    """`del ctx.attr` in backward: a second backward reads an attribute that is gone."""
    state = Record("Forgets")
    state.scale = scale
    state.save_for_backward(x)
    return x * scale, (state,)


def forgets_bwd(residuals, g):
    (state,) = residuals
    (x,) = state.saved_tensors
    scale = state.scale
    del state.scale
    return g * x * scale, None


Forgets = custom_vjp(
    forgets_fwd,
    forgets_bwd,
    name="Forgets",
    ctx_record=True,
    backward_kind="side_effecting",
    backward_reason="backward deletes ctx.scale",
    backward_nones=(1,),
)


def caches_fwd(x):
    """Backward caches a value on ctx the first time and reuses it (a write through a closure)."""
    state = Record("Caches")
    state.save_for_backward(x)
    state.cache = None
    return x.exp(), (state,)


def caches_bwd(residuals, g):
    (state,) = residuals
    (x,) = state.saved_tensors

    def cached():
        if state.cache is None:
            state.cache = x.cos() * 4
        return state.cache

    return g * cached()


Caches = custom_vjp(
    caches_fwd,
    caches_bwd,
    name="Caches",
    ctx_record=True,
    backward_kind="side_effecting",
    backward_reason="backward writes ctx.cache",
    backward_nones=(),
    record_sets_only=True,
)


def scenario_counter_backward_twice():
    x = torch.randn(3, requires_grad=True)
    y = Counter(x)
    (first,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    (second,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    return [x], (y, first, second)  # the harness's own backward is the third


def scenario_counter_per_call():
    x = torch.randn(3, requires_grad=True)
    return [x], (Counter(x), Counter(x * 2))


def scenario_drops_blocks_second_backward_fails():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    y = DropsBlocks(x, w)
    gx, gw = torch.autograd.grad(y.sum(), (x, w), retain_graph=True)
    return [x, w], (y, gx, gw)


def scenario_forgets_second_backward_fails():
    x = torch.randn(3, requires_grad=True)
    y = Forgets(x, 1.5)
    (gx,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    return [x], (y, gx)


def scenario_caches_twice():
    x = torch.randn(3, requires_grad=True)
    y = Caches(x)
    (first,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    return [x], (y, first)


def scenario_freed_without_retain():
    x = torch.randn(3, requires_grad=True)
    y = Forgets(x, 2.0)
    (gx,) = torch.autograd.grad(y.sum(), x)
    return [x], (y, gx)  # the harness's backward: saved tensors were freed

import torch
from inliner.runtime import Record, custom_vjp


# an attribute set on one path only, and one backward writes: ctx needs a record, and
# what is on the record is what is on the node (out.grad_fn), both ways
def maybe_bias_fwd(x, bias, scale):
    state = Record("MaybeBias")
    state.scale = scale
    state.calls = 0
    if bias is not None:
        state.bias = bias
        return x * scale + bias, (state,)
    return x * scale, (state,)


def maybe_bias_bwd(residuals, g):
    (state,) = residuals
    state.calls += 1
    grad_bias = (g * 3).sum(0) if hasattr(state, "bias") else None
    return g * state.scale * 2, grad_bias, None


MaybeBias = custom_vjp(
    maybe_bias_fwd,
    maybe_bias_bwd,
    name="MaybeBias",
    ctx_record=True,
    backward_kind="side_effecting",
    backward_reason="backward writes ctx.calls",
    backward_nones=(2,),
    record_sets_only=True,
)


def scenario_read_through_grad_fn():
    x = torch.randn(2, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    out = MaybeBias(x, b, 2.0)
    node = out.grad_fn
    return [x, b], (out, node.scale, node.calls, node.bias is b, type(node).__name__)


def scenario_unset_path_has_no_attribute():
    x = torch.randn(2, 3, requires_grad=True)
    out = MaybeBias(x, None, 2.0)
    return [x], (out, hasattr(out.grad_fn, "bias"))


def scenario_write_before_backward():
    x = torch.randn(2, 3, requires_grad=True)
    out = MaybeBias(x, None, 2.0)
    out.grad_fn.scale = 5.0
    out.grad_fn.bias = torch.zeros(3)  # backward now returns a bias gradient for a None input
    return [x], out


def scenario_backward_writes_are_on_the_node():
    x = torch.randn(2, 3, requires_grad=True)
    out = MaybeBias(x, None, 2.0)
    node = out.grad_fn
    for _ in range(2):
        torch.autograd.grad(out.sum(), x, retain_graph=True)
    return [], (node.calls, sorted(k for k in vars(node) if not k.startswith("_")))

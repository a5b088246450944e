import torch
from inliner.runtime import Record, custom_vjp


def attention_fwd(q, k, scale, is_grad):
    """Real attention kernels: config and saves only where a backward can follow."""
    state = Record("Attention")
    out = (q * k).sum(-1, keepdim=True) * scale * q
    if is_grad:
        state.save_for_backward(q, k)
        state.scale = scale
    return out, (state,)


def attention_bwd(residuals, g):
    (state,) = residuals
    q, k = state.saved_tensors
    return g * k * state.scale * 2, g * q, None, None


Attention = custom_vjp(attention_fwd, attention_bwd, name="Attention", ctx_record=True)


def maybe_bias_fwd(x, bias):
    """A tensor attribute set on one branch, probed with hasattr in backward."""
    state = Record("MaybeBias")
    if bias is not None:
        state.bias = bias
        return x + bias, (state,)
    return x * 1, (state,)


def maybe_bias_bwd(residuals, g):
    (state,) = residuals
    grad_bias = (g * 3).sum(0) if hasattr(state, "bias") else None
    return g * 2, grad_bias


MaybeBias = custom_vjp(
    maybe_bias_fwd, maybe_bias_bwd, name="MaybeBias", ctx_record=True
)


def training_only_fwd(x, training):
    """An attribute backward needs is set only in training: the other path fails in backward."""
    state = Record("TrainingOnly")
    if training:
        state.scale = 2.0
        state.mode = "train"
    return x * 3, (state,)


def training_only_bwd(residuals, g):
    (state,) = residuals
    return g * state.scale * 5, None


TrainingOnly = custom_vjp(
    training_only_fwd, training_only_bwd, name="TrainingOnly", ctx_record=True
)


def never_read_fwd(x, flag):
    """An attribute set on one path that backward never reads: on the node exactly there (a record)."""
    state = Record("NeverRead")
    if flag:
        state.extra = x
    return x * 2, (state,)


def never_read_bwd(residuals, g):
    return g * 3, None


NeverRead = custom_vjp(
    never_read_fwd, never_read_bwd, name="NeverRead", ctx_record=True
)


def scenario_attention_with_grad():
    q = torch.randn(2, 3, requires_grad=True)
    k = torch.randn(2, 3, requires_grad=True)
    return [q, k], Attention(q, k, 0.5, True)


def scenario_attention_without_grad_path():
    q = torch.randn(2, 3, requires_grad=True)
    k = torch.randn(2, 3, requires_grad=True)
    return [q, k], Attention(q, k, 0.5, False)  # backward: nothing was saved


def scenario_bias():
    x = torch.randn(2, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    return [x, b], MaybeBias(x, b)


def scenario_no_bias():
    x = torch.randn(2, 3, requires_grad=True)
    return [x], MaybeBias(x, None)


def scenario_training():
    x = torch.randn(3, requires_grad=True)
    return [x], TrainingOnly(x, True)


def scenario_training_off_backward_fails():
    x = torch.randn(3, requires_grad=True)
    return [x], TrainingOnly(x, False)


def scenario_never_read():
    x = torch.randn(3, requires_grad=True)
    return [x], NeverRead(x, True)

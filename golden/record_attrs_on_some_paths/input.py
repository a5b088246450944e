import torch


class Attention(torch.autograd.Function):
    """Real attention kernels: config and saves only where a backward can follow."""

    @staticmethod
    def forward(ctx, q, k, scale, is_grad):
        out = (q * k).sum(-1, keepdim=True) * scale * q
        if is_grad:
            ctx.save_for_backward(q, k)
            ctx.scale = scale
        return out

    @staticmethod
    def backward(ctx, g):
        q, k = ctx.saved_tensors
        return g * k * ctx.scale * 2, g * q, None, None


class MaybeBias(torch.autograd.Function):
    """A tensor attribute set on one branch, probed with hasattr in backward."""

    @staticmethod
    def forward(ctx, x, bias):
        if bias is not None:
            ctx.bias = bias
            return x + bias
        return x * 1

    @staticmethod
    def backward(ctx, g):
        grad_bias = (g * 3).sum(0) if hasattr(ctx, "bias") else None
        return g * 2, grad_bias


class TrainingOnly(torch.autograd.Function):
    """An attribute backward needs is set only in training: the other path fails in backward."""

    @staticmethod
    def forward(ctx, x, training):
        if training:
            ctx.scale = 2.0
            ctx.mode = "train"
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale * 5, None


class NeverRead(torch.autograd.Function):
    """An attribute set on one path that backward never reads: on the node exactly there (a record)."""

    @staticmethod
    def forward(ctx, x, flag):
        if flag:
            ctx.extra = x
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


def scenario_attention_with_grad():
    q = torch.randn(2, 3, requires_grad=True)
    k = torch.randn(2, 3, requires_grad=True)
    return [q, k], Attention.apply(q, k, 0.5, True)


def scenario_attention_without_grad_path():
    q = torch.randn(2, 3, requires_grad=True)
    k = torch.randn(2, 3, requires_grad=True)
    return [q, k], Attention.apply(q, k, 0.5, False)  # backward: nothing was saved


def scenario_bias():
    x = torch.randn(2, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    return [x, b], MaybeBias.apply(x, b)


def scenario_no_bias():
    x = torch.randn(2, 3, requires_grad=True)
    return [x], MaybeBias.apply(x, None)


def scenario_training():
    x = torch.randn(3, requires_grad=True)
    return [x], TrainingOnly.apply(x, True)


def scenario_training_off_backward_fails():
    x = torch.randn(3, requires_grad=True)
    return [x], TrainingOnly.apply(x, False)


def scenario_never_read():
    x = torch.randn(3, requires_grad=True)
    return [x], NeverRead.apply(x, True)

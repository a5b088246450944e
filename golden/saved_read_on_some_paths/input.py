"""backward reads ctx.saved_tensors after an early return, inside a branch, or twice.

Reading saved tensors runs the version check, the saved-tensor unpack hooks and the
check against backward through freed tensors: the rewrite must read them where (and as
often as) the original did, so those errors and hook calls show on the same paths only.
"""
import torch


class EarlyReturn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        ctx.scale = 3.0
        return x * w

    @staticmethod
    def backward(ctx, g):
        if not ctx.needs_input_grad[0]:
            return None, g * 5
        x, w = ctx.saved_tensors
        return g * w * ctx.scale + x, g * 5


class ReadInBranch(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        gx = gw = None
        if ctx.needs_input_grad[0]:
            x, w = ctx.saved_tensors
            gx = g * w * 3
        if ctx.needs_input_grad[1]:
            gw = g * 7
        return gx, gw


class ReadTwice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        gx = g * ctx.saved_tensors[0] * 3
        (x,) = ctx.saved_tensors
        return gx + x


class GroupAfterReturn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, flag):
        if flag:
            ctx.save_for_backward(x, w)
        else:
            ctx.save_for_backward(w)
        return x * w * 4

    @staticmethod
    def backward(ctx, g):
        if not ctx.needs_input_grad[0]:
            return None, g * 11, None
        saved = ctx.saved_tensors
        return g * saved[-1] * 13 + saved[0], g * 11, None


class SetupEarlyReturn(torch.autograd.Function):
    @staticmethod
    def forward(x, w):
        return x * w

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, w = inputs
        ctx.save_for_backward(x, w)

    @staticmethod
    def backward(ctx, g):
        if not ctx.needs_input_grad[0]:
            return None, g * 19
        x, w = ctx.saved_tensors
        return g * w * 23 + x, g * 19


def _counting_hooks():
    unpacked = []

    def pack(t):
        return t

    def unpack(t):
        unpacked.append(1)
        return t

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack), unpacked


def scenario_early_return_after_inplace():
    x = torch.randn(3)  # no gradient: backward returns before reading saved tensors
    w = torch.randn(3, requires_grad=True)
    y = EarlyReturn.apply(x, w)
    x.add_(1)
    return [w], y


def scenario_early_return_reads_after_inplace():
    base = torch.randn(3, requires_grad=True)
    x = base * 1
    w = torch.randn(3, requires_grad=True)
    y = EarlyReturn.apply(x, w)
    x.add_(1)  # backward reads x: the version check fails in both
    return [base, w], y


def scenario_early_return_second_backward():
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    y = EarlyReturn.apply(x, w)
    y.sum().backward()  # frees the saved tensors; the harness's backward never reads them
    return [w], y


def scenario_early_return_reads_second_backward():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    y = EarlyReturn.apply(x, w)
    y.sum().backward()  # the harness's backward reads freed tensors: an error in both
    return [x, w], y


def scenario_branch_after_inplace():
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    y = ReadInBranch.apply(x, w)
    x.add_(1)
    return [w], y


def scenario_branch_reads():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], ReadInBranch.apply(x, w)


def scenario_branch_unpack_hooks():
    hooks, unpacked = _counting_hooks()
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    with hooks:
        y = ReadInBranch.apply(x, w)
    y.sum().backward(retain_graph=True)
    return [w], (y, len(unpacked))


def scenario_read_twice_unpack_hooks():
    hooks, unpacked = _counting_hooks()
    x = torch.randn(3, requires_grad=True)
    with hooks:
        y = ReadTwice.apply(x)
    y.sum().backward(retain_graph=True)
    return [x], (y, len(unpacked))


def scenario_group_skipped_after_inplace():
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    y = GroupAfterReturn.apply(x, w, True)
    x.add_(1)
    return [w], y


def scenario_group_read_after_inplace():
    base = torch.randn(3, requires_grad=True)
    x = base * 1
    w = torch.randn(3, requires_grad=True)
    y = GroupAfterReturn.apply(x, w, True)
    x.add_(1)
    return [base, w], y


def scenario_group_read():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], (GroupAfterReturn.apply(x, w, True), GroupAfterReturn.apply(x, w, False))


def scenario_setup_context_early_return_after_inplace():
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    y = SetupEarlyReturn.apply(x, w)
    x.add_(1)
    return [w], y


def scenario_setup_context_second_backward():
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    y = SetupEarlyReturn.apply(x, w)
    y.sum().backward()
    return [w], y


def scenario_setup_context_reads():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], SetupEarlyReturn.apply(x, w)

"""backward reads ctx.saved_tensors after an early return, inside a branch, or twice.

Reading saved tensors runs the version check, the saved-tensor unpack hooks and the
check against backward through freed tensors: the rewrite must read them where (and as
often as) the original did, so those errors and hook calls show on the same paths only.
"""
import torch
from inliner.runtime import custom_vjp


def early_return_fwd(x, w):
    scale = 3.0
    return x * w, (x, w, scale)


def early_return_bwd(residuals, g, *, needs_input_grad):
    (scale,) = residuals[2:]
    if not needs_input_grad[0]:
        return None, g * 5
    x, w = residuals[:2]
    return g * w * scale + x, g * 5


EarlyReturn = custom_vjp(
    early_return_fwd,
    early_return_bwd,
    name="EarlyReturn",
    saved_for_backward_idx=(0, 1),
    ctx_attrs={2: "scale"},
    bwd_needs_input_grad=True,
    saved_on_demand=True,
)


def read_in_branch_fwd(x, w):
    return x * w, (x, w)


def read_in_branch_bwd(residuals, g, *, needs_input_grad):
    gx = gw = None
    if needs_input_grad[0]:
        x, w = residuals[:2]
        gx = g * w * 3
    if needs_input_grad[1]:
        gw = g * 7
    return gx, gw


ReadInBranch = custom_vjp(
    read_in_branch_fwd,
    read_in_branch_bwd,
    name="ReadInBranch",
    saved_for_backward_idx=(0, 1),
    bwd_needs_input_grad=True,
    saved_on_demand=True,
)


def read_twice_fwd(x):
    return x * 2, (x,)


def read_twice_bwd(residuals, g):
    gx = g * residuals[:1][0] * 3
    (x,) = residuals[:1]
    return gx + x


ReadTwice = custom_vjp(
    read_twice_fwd,
    read_twice_bwd,
    name="ReadTwice",
    saved_for_backward_idx=(0,),
    saved_on_demand=True,
)


def group_after_return_fwd(x, w, flag):
    saved_tensors = ()
    if flag:
        saved_tensors = (x, w)
    else:
        saved_tensors = (w,)
    return x * w * 4, (saved_tensors,)


def group_after_return_bwd(residuals, g, *, needs_input_grad):
    if not needs_input_grad[0]:
        return None, g * 11, None
    saved = residuals[0]
    return g * saved[-1] * 13 + saved[0], g * 11, None


GroupAfterReturn = custom_vjp(
    group_after_return_fwd,
    group_after_return_bwd,
    name="GroupAfterReturn",
    saved_tensors_idx=0,
    bwd_needs_input_grad=True,
    saved_on_demand=True,
)


def setup_early_return_fwd(x, w):
    output = x * w
    return output, (x, w)


def setup_early_return_bwd(residuals, g, *, needs_input_grad):
    if not needs_input_grad[0]:
        return None, g * 19
    x, w = residuals[:2]
    return g * w * 23 + x, g * 19


SetupEarlyReturn = custom_vjp(
    setup_early_return_fwd,
    setup_early_return_bwd,
    name="SetupEarlyReturn",
    saved_for_backward_idx=(0, 1),
    fill_defaults=True,
    bwd_needs_input_grad=True,
    saved_on_demand=True,
)


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
    y = EarlyReturn(x, w)
    x.add_(1)
    return [w], y


def scenario_early_return_reads_after_inplace():
    base = torch.randn(3, requires_grad=True)
    x = base * 1
    w = torch.randn(3, requires_grad=True)
    y = EarlyReturn(x, w)
    x.add_(1)  # backward reads x: the version check fails in both
    return [base, w], y


def scenario_early_return_second_backward():
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    y = EarlyReturn(x, w)
    y.sum().backward()  # frees the saved tensors; the harness's backward never reads them
    return [w], y


def scenario_early_return_reads_second_backward():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    y = EarlyReturn(x, w)
    y.sum().backward()  # the harness's backward reads freed tensors: an error in both
    return [x, w], y


def scenario_branch_after_inplace():
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    y = ReadInBranch(x, w)
    x.add_(1)
    return [w], y


def scenario_branch_reads():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], ReadInBranch(x, w)


def scenario_branch_unpack_hooks():
    hooks, unpacked = _counting_hooks()
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    with hooks:
        y = ReadInBranch(x, w)
    y.sum().backward(retain_graph=True)
    return [w], (y, len(unpacked))


def scenario_read_twice_unpack_hooks():
    hooks, unpacked = _counting_hooks()
    x = torch.randn(3, requires_grad=True)
    with hooks:
        y = ReadTwice(x)
    y.sum().backward(retain_graph=True)
    return [x], (y, len(unpacked))


def scenario_group_skipped_after_inplace():
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    y = GroupAfterReturn(x, w, True)
    x.add_(1)
    return [w], y


def scenario_group_read_after_inplace():
    base = torch.randn(3, requires_grad=True)
    x = base * 1
    w = torch.randn(3, requires_grad=True)
    y = GroupAfterReturn(x, w, True)
    x.add_(1)
    return [base, w], y


def scenario_group_read():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], (GroupAfterReturn(x, w, True), GroupAfterReturn(x, w, False))


def scenario_setup_context_early_return_after_inplace():
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    y = SetupEarlyReturn(x, w)
    x.add_(1)
    return [w], y


def scenario_setup_context_second_backward():
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    y = SetupEarlyReturn(x, w)
    y.sum().backward()
    return [w], y


def scenario_setup_context_reads():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], SetupEarlyReturn(x, w)

"""What the emitted functions look like where tidiness and equivalence meet: residual
slots merged only where one value reaches each reader once (never two attributes of the
autograd node), ctx attributes nothing reads,
comments of deleted ctx lines. Every case is also run against its original."""

from __future__ import annotations

import pytest

from inliner import flatten
from tests.support.harness import assert_same, load_module, run_all


def _flat(source: str) -> str:
    result = flatten(source, path="m.py")
    assert result.refused == (), result.diagnostics
    return result.source


def _behaves_the_same(source: str, rewritten: str, label: str) -> None:
    assert_same(
        run_all(load_module(source, f"{label}_original")), run_all(load_module(rewritten, f"{label}_rewritten")), label
    )


SHARED_ATTRIBUTE = """
import torch
import torch.autograd.forward_ad as fwAD


class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.a = k
        ctx.b = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.a * 3, None

    @staticmethod
    def jvp(ctx, t, t_k):
        return t * ctx.b * 7


def scenario_backward():
    x = torch.randn(3, requires_grad=True)
    return [x], Mul.apply(x, 2.0)


def scenario_forward_ad():
    with fwAD.dual_level():
        out = Mul.apply(fwAD.make_dual(torch.randn(3), torch.randn(3)), 2.0)
        return [], fwAD.unpack_dual(out).tangent.clone()


def scenario_write_one_through_the_node():
    x = torch.randn(3, requires_grad=True)
    out = Mul.apply(x, 2.0)
    out.grad_fn.a = 5.0
    return [x], (out, out.grad_fn.b)
"""


def test_two_attributes_of_one_value_stay_two_slots():
    """ctx.a and ctx.b are two attributes of the autograd node (a write through grad_fn
    changes one of them), so one value in two attributes is two slots, each on the node
    under its own name."""
    rewritten = _flat(SHARED_ATTRIBUTE)
    assert "return x * k, (k, k)" in rewritten
    assert 'ctx_attrs={0: "a", 1: "b"}' in rewritten
    _behaves_the_same(SHARED_ATTRIBUTE, rewritten, "shared_attribute")


NOT_MERGED = {
    "saved-twice": (
        "ctx.save_for_backward(x, x)",
        "a, b = ctx.saved_tensors\n        return g * a * 3 + g * b * 5 + (a is b) * 7",
        "(x, x)",
    ),
    "saved-and-plain": (
        "ctx.save_for_backward(x)\n        ctx.x = x",
        "(a,) = ctx.saved_tensors\n        return g * a * 3 + g * ctx.x * 5",
        "(x, x)",
    ),
    "one-reader-reads-both": (
        "ctx.a = x\n        ctx.b = x",
        "return g * ctx.a * 3 + g * ctx.b * 5",
        "(x, x)",
    ),
}


@pytest.mark.parametrize("case", list(NOT_MERGED))
def test_slots_that_stay_apart(case):
    forward, backward, residuals = NOT_MERGED[case]
    source = f"""
import torch


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        {forward}
        return x * 2

    @staticmethod
    def backward(ctx, g):
        {backward}


def scenario_backward():
    x = torch.randn(3, requires_grad=True)
    return [x], Twice.apply(x * 1)
"""
    rewritten = _flat(source)
    assert f"return x * 2, {residuals}" in rewritten
    _behaves_the_same(source, rewritten, case.replace("-", "_"))


UNREAD_ATTRIBUTES = """
import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k, flags):
        ctx.k = k
        ctx.flag = True
        ctx.first = flags[0]
        ctx.a, ctx.b = k, 3
        ctx.kept = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.kept * 3, None, None


def scenario_read_through_the_node():
    x = torch.randn(3, requires_grad=True)
    out = Scale.apply(x, 2.0, [True])
    node = out.grad_fn
    return [x], (out, node.k, node.flag, node.first, node.a, node.b)
"""


def test_attributes_nothing_reads_are_on_the_node_where_every_path_sets_them():
    rewritten = _flat(UNREAD_ATTRIBUTES)
    assert 'ctx_attrs={0: "k", 1: "flag", 2: "first", 3: "a", 4: "b", 5: "kept"}' in rewritten
    _behaves_the_same(UNREAD_ATTRIBUTES, rewritten, "unread_attributes")


DEAD_ATTRIBUTES = """
import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k, flags):
        if k > 0:
            ctx.k = k
            ctx.flag = True
            ctx.first = flags[0]
            ctx.a, ctx.b = k, 3
            ctx.c, ctx.d = k, x.sum()
        ctx.kept = k
        ctx.d = x.sum()
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.kept * ctx.d * 3, None, None


def scenario_backward():
    x = torch.randn(3, requires_grad=True)
    return [x], Scale.apply(x, 2.0, [True])


def scenario_bad_flags():
    x = torch.randn(3, requires_grad=True)
    return [x], Scale.apply(x, 2.0, [])


def scenario_not_on_the_node():
    x = torch.randn(3, requires_grad=True)
    out = Scale.apply(x, -2.0, [])
    return [x], (out, hasattr(out.grad_fn, "flag"))


def scenario_on_the_node():
    x = torch.randn(3, requires_grad=True)
    out = Scale.apply(x, 2.0, [False])
    node = out.grad_fn
    return [x], (out, node.flag, node.first, node.a, node.b, node.c, hasattr(node, "k"))
"""


def test_attributes_set_on_some_paths_nothing_reads_are_on_the_node_where_forward_set_them():
    """In the original they are on ``out.grad_fn`` exactly on the paths that set them, which
    only a ctx record carries (a residual cannot be absent); before, they became dead locals."""
    rewritten = _flat(DEAD_ATTRIBUTES)
    assert "ctx_record=True" in rewritten
    _behaves_the_same(DEAD_ATTRIBUTES, rewritten, "dead_attributes")


COMMENTED = """
import torch


class Commented(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        # About what follows.

        # saving x for backward
        ctx.save_for_backward(x)  # x only
        ctx.k = k; y = x * k  # on a kept line
        return y

    @staticmethod
    def backward(ctx, g):
        # unpack
        (x,) = ctx.saved_tensors  # one tensor
        return g * x * ctx.k * 3, None
"""


def test_comments_of_deleted_ctx_lines_go_with_them():
    rewritten = _flat(COMMENTED)
    assert "saving x" not in rewritten and "x only" not in rewritten
    assert "    # About what follows.\n" in rewritten
    assert "y = x * k  # on a kept line\n" in rewritten
    assert "    # unpack\n    x, k = residuals  # one tensor\n" in rewritten


SLOTS_READ_WITH_GAPS = """
import torch

_ = str  # a module-level `_` (gettext's, say) backward reads: the placeholder must not hide it


class Gaps(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.a, ctx.b, ctx.c, ctx.d = k, 2.0, 3.0, 4.0
        return x * k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * ctx.a * ctx.c * len(_(1)), None


class TailOnly(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        ctx.m = 2.0
        return x * k

    @staticmethod
    def backward(ctx, g):
        if g is None:
            return None, None
        (x,) = ctx.saved_tensors
        return g * ctx.m * 3, None


def scenario_gaps():
    x = torch.randn(3, requires_grad=True)
    out = Gaps.apply(x, 2.0)
    return [x], (out, out.grad_fn.b, out.grad_fn.d)


def scenario_tail_only():
    x = torch.randn(3, requires_grad=True)
    out = TailOnly.apply(x, 2.0)
    return [x], (out, out.grad_fn.k)
"""


def test_backward_binds_only_the_residuals_it_reads():
    """Slots backward does not read stay in fwd's return (they are on the autograd node),
    but bwd binds no name for them: a placeholder between read slots (not ``_`` where the
    body reads a ``_``), a slice where they lead or trail, nothing where none is read."""
    rewritten = _flat(SLOTS_READ_WITH_GAPS)
    assert "return x * k, (x, a, b, c, d)" in rewritten
    assert "    x, a, _unread, c = residuals[:4]\n" in rewritten
    assert "    (m,) = residuals[2:]\n" in rewritten  # x is read on demand, k never
    _behaves_the_same(SLOTS_READ_WITH_GAPS, rewritten, "slots_read_with_gaps")


def test_a_backward_that_reads_no_residual_opens_none():
    rewritten = _flat(CHANGED_ATTRIBUTE_ONLY)
    assert "def scaled_bwd(residuals, g):\n    return g * 3, None\n" in rewritten
    _behaves_the_same(CHANGED_ATTRIBUTE_ONLY, rewritten, "no_residual_read")


CHANGED_ATTRIBUTE_ONLY = """
import torch


class Scaled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x * scale

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


def scenario_backward():
    x = torch.randn(3, requires_grad=True)
    out = Scaled.apply(x, 2.0)
    return [x], (out, out.grad_fn.scale)
"""

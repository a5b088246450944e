"""Op calls next to each other and op bodies the engine must follow or refuse.

The golden cases hop_chained_* and hop_*body_returns_local show the supported shapes
end to end; these tests pin the edges: what is left alone (with a diagnostic, the
file byte-identical) and that a flattened file still computes what the original did.
"""

from __future__ import annotations

import pytest

from inliner import flatten
from tests.support.harness import assert_same, load_module, run_all

pytestmark = pytest.mark.filterwarnings("ignore")

_TORCH = tuple(int(part) for part in __import__("torch").__version__.split("+")[0].split(".")[:2])
#: the original runs the torch 2.13 form of the op (saved_for_backward_idx), which torch <= 2.9 rejects
runs_213_form = pytest.mark.skipif(_TORCH < (2, 10), reason="the original calls the torch 2.13 form of the op")

TRACED = """\
import torch
from torch import nn


class ScaleForward(nn.Module):
    def forward(self, x):
        return (x * 2,), (x,)


class ScaleBackward(nn.Module):
    def forward(self, g, x):
        return (g * x * 3,)


scale_fwd = torch.fx.symbolic_trace(ScaleForward())
scale_bwd = torch.fx.symbolic_trace(ScaleBackward())
"""


def _without_node_names(value):
    """The op's own backward node is ApplyTemplateBackward; a flat callable's is named after it."""
    if isinstance(value, dict):
        return {k: _without_node_names(v) for k, v in value.items() if k != "grad_fn"}
    if isinstance(value, (list, tuple)):
        return type(value)(_without_node_names(v) for v in value)
    return value


def _codes(result) -> list[str]:
    return [d.code for d in result.diagnostics]


@runs_213_form
def test_result_local_bound_twice_is_not_renamed():
    """Each call would rename `autograd_function_apply` after itself: with two bindings
    of the local, a rename could not say which call a use means, so none happens."""
    source = (
        TRACED
        + """

def f(x):
    autograd_function_apply = torch.ops.higher_order.autograd_function_apply(scale_fwd, scale_bwd, x, non_differentiable_idx=[], saved_for_backward_idx=[0])
    autograd_function_apply = torch.ops.higher_order.autograd_function_apply(scale_fwd, scale_bwd, autograd_function_apply[0], non_differentiable_idx=[], saved_for_backward_idx=[0])
    return autograd_function_apply[0]


def scenario_twice():
    x = torch.randn(3, requires_grad=True)
    return [x], f(x)
"""
    )
    result = flatten(source, path="twice.py")
    assert _codes(result) == ["INL001", "INL001"]
    assert "autograd_function_apply = autograd_function(x)" in result.source
    assert "autograd_function_apply = autograd_function_1(autograd_function_apply[0])" in result.source
    original = run_all(load_module(source, "twice_original"))
    rewritten = run_all(load_module(result.source, "twice_rewritten"))
    assert_same(_without_node_names(original), _without_node_names(rewritten), "twice")


def test_function_class_holding_an_op_call_is_left_alone():
    """Flattening the class or the call alone would not be stable; both are refused."""
    source = (
        TRACED
        + """

class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.ops.higher_order.autograd_function_apply(scale_fwd, scale_bwd, x, non_differentiable_idx=[], saved_for_backward_idx=[0])[0]

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 5
"""
    )
    result = flatten(source, path="holder.py")
    assert result.error is None and result.source == source
    assert sorted(_codes(result)) == ["INL105", "INL201"]
    assert any("calls autograd_function_apply" in d.message for d in result.diagnostics)


V29 = """\
import torch

W = torch.ones(3, requires_grad=True)


def fwd(ctx, x, w):
    {fwd_body}


def bwd(ctx, g, x):
    {bwd_body}


def f(x):
    return torch.ops.higher_order.autograd_function_apply(fwd, bwd, x, W, args_tensor_mask=[True], non_differentiable_idx=[])
"""


@pytest.mark.parametrize(
    ("fwd_body", "bwd_body", "code", "reason"),
    [
        # the lifted operand's None would go on the last return only
        (
            "return x * w, [x]",
            "if g.sum() > 0:\n        return g * x\n    return g * x * 3",
            "INL202",
            "control flow (`if`)",
        ),
        # rebound on one path: the literal is not what the return sees
        (
            "saved = [x]\n    if x.sum() > 0:\n        saved = [x, w]\n    return x * w, saved",
            "return g * x",
            "INL202",
            "control flow",
        ),
        # a parameter, then bound: two bindings
        ("w = (x,)\n    return x * 2, w", "return g * x", "INL201", "bound once"),
        # read twice: what the list holds at the return is unknown
        ("saved = [x]\n    saved.append(w)\n    return x * w, saved", "return g * x", "INL201", "bound once"),
        # starred: the count is unknown
        ("extra = (x,)\n    saved = (*extra,)\n    return x * w, saved", "return g * x", "INL201", "bound once"),
    ],
    ids=["bwd-early-return", "saved-rebound-on-a-path", "saved-is-parameter", "saved-list-appended", "saved-starred"],
)
def test_op_bodies_the_engine_cannot_follow_are_refused(fwd_body, bwd_body, code, reason):
    source = V29.format(fwd_body=fwd_body, bwd_body=bwd_body)
    result = flatten(source, path="v29.py")
    assert result.source == source
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == code and reason in diagnostic.message, diagnostic.format()


@pytest.mark.parametrize("body", ["fwd", "bwd"])
def test_an_async_body_is_refused(body):
    """Calling an ``async def`` gives a coroutine, never the op's outputs: a flat function
    made from its body would compute what the original cannot."""
    source = V29.format(fwd_body="return x * w, [x]", bwd_body="return g * x").replace(
        f"\ndef {body}(", f"\nasync def {body}("
    )
    assert f"async def {body}(" in source
    result = flatten(source, path="v29.py")
    assert result.source == source
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "INL200", diagnostic.format()


def test_bwd_returning_a_tuple_local_gets_the_lifted_none_after_its_items():
    source = V29.format(
        fwd_body="out = x * w\n    saved = (x,)\n    return out, saved",
        bwd_body="grads = (g * x * 3,)\n    return grads",
    )
    result = flatten(source, path="v29.py")
    assert _codes(result) == ["INL001"]
    assert "return (*grads, None)" in result.source
    module = load_module(result.source, "v29_local")
    import torch

    x = torch.randn(3, requires_grad=True)
    out = module.f(x)
    (gx, gw) = torch.autograd.grad(out.sum(), [x, module.W], allow_unused=True)
    assert torch.equal(gx, x.detach() * 3) and gw is None


TRACED_BODY = """\
import math

import torch
import torch.nn.functional as F
from torch import nn

SCALE = 2.0


def helper(x):
    return x * 2


class Forward(nn.Module):
    def forward(self, x, w):
        {body}


class Backward(nn.Module):
    def forward(self, g, x, w):
        return g * w * 3, g * x * 5


fwd = torch.fx.symbolic_trace(Forward())
bwd = torch.fx.symbolic_trace(Backward())


def f(x, w):
    return torch.ops.higher_order.autograd_function_apply(
        fwd, bwd, x, w, non_differentiable_idx=[], saved_for_backward_idx=[0, 1]
    )[0]


def scenario_f():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], f(x, w)
"""


@pytest.mark.parametrize(
    ("body", "code", "reason"),
    [
        # fixed when the module was loaded: symbolic_trace read SCALE, ran torch.rand, answered `is`
        ("return (x * SCALE,), (x, w)", "INL202", "reads the module-level `SCALE`"),
        (
            "return (x + torch.rand(3),), (x, w)",
            "INL202",
            "calls `torch.rand` on values known when the body was traced",
        ),
        ("return (x * (x is w),), (x, w)", "INL202", "with `is`/`in`"),
        ("torch.set_grad_enabled(True)\n        return (x * w,), (x, w)", "INL203", "switches grad mode"),
        # fx records `x += w` on a proxy as a new value; eager adds in place, into the caller's tensor
        ("x += w\n        return (x * 1,), (x, w)", "INL202", "augmented assignment"),
        ("return (helper(x),), (x, w)", "INL202", "calls `helper`"),
        ("return (x * len(x),), (x, w)", "INL202", "calls the builtin `len`"),
        ("out = x * w if w is not None else x\n        return (out,), (x, w)", "INL202", "conditional expression"),
        ("out = sum([x, w])\n        return (out,), (x, w)", "INL202", "calls the builtin `sum`"),
        ("x.data = w\n        return (x * w,), (x, w)", "INL202", "assigns to `x.data`"),
        (
            "with torch.no_grad():\n            out = x * w\n        return (out,), (x, w)",
            "INL202",
            "control flow (`with`)",
        ),
        ("return (x * w,), (x, w)\n        return (x,), (x, w)", "INL202", "returns before its last statement"),
    ],
    ids=[
        "global",
        "static-call",
        "is-test",
        "grad-mode",
        "augmented",
        "helper",
        "len",
        "ifexp",
        "sum",
        "attribute-target",
        "with",
        "two-returns",
    ],
)
def test_traced_bodies_with_values_fixed_at_trace_time_are_refused(body, code, reason):
    source = TRACED_BODY.format(body=body)
    result = flatten(source, path="traced.py")
    assert result.source == source
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == code and reason in diagnostic.message, diagnostic.format()


@pytest.mark.parametrize(
    "body",
    [
        "return (F.relu(x) * w,), (x, w)",
        "out = x * math.pi + x.new_ones(3) * x.shape[0]\n        return (out,), (x, w)",
        "out = torch.sum(x * w, dim=0, keepdim=True).expand(3)\n        return (out,), (x, w)",
        "out = x.clone()\n        out.mul_(w)\n        return (out,), (x, w)",
        "out = torch.where(x > w, x, w).to(dtype=torch.float32)\n        return (out,), (x, w)",
    ],
    ids=["functional-alias", "import-and-shape", "keywords", "in-place-method", "where"],
)
@runs_213_form
def test_straight_line_traced_bodies_are_flattened_and_compute_what_the_graph_did(body):
    source = TRACED_BODY.format(body=body)
    result = flatten(source, path="traced.py")
    assert _codes(result) == ["INL001"], [d.format() for d in result.diagnostics]
    original = run_all(load_module(source, "traced_original"))
    rewritten = run_all(load_module(result.source, "traced_rewritten"))
    assert_same(_without_node_names(original), _without_node_names(rewritten), "traced")


def test_only_dynamos_whole_body_bracket_is_dropped():
    """A dumped body's bracket is dropped only in dynamo's exact form, first and last
    before the return; half a bracket is a grad-mode switch like any other."""
    from tests.support.golden import GOLDEN

    source = (GOLDEN / "hop_v29_dump" / "input.py").read_text()
    assert flatten(source, path="dump.py").flattened
    epilogue = "            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None\n            return (mul, [l_x_])"
    assert epilogue in source
    half = source.replace(epilogue, "            return (mul, [l_x_])")
    result = flatten(half, path="dump.py")
    assert result.source == half
    assert _codes(result) == ["INL203"], [d.format() for d in result.diagnostics]
    spelled = source.replace(
        "_set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None\n            return (mul, [l_x_])",
        "torch.set_grad_enabled(True)\n            return (mul, [l_x_])",
    )
    assert _codes(flatten(spelled, path="dump.py")) == ["INL203"]


@pytest.mark.parametrize(
    ("bwd_body", "expected_gx"),
    [
        # a tuple the engine cannot see: the op passed it on as the tuple of gradients
        ("grads = (g * x * 3).chunk(1)\n    return grads", "g * x * 3"),
        ("return (g * x * 3).chunk(1)", "g * x * 3"),
        # one tensor, spelled as an expression
        ("return g * x * 3", "g * x * 3"),
        # more gradients than tensor operands, the extra ones None: accepted by autograd
        ("return g * x * 3, None", "g * x * 3"),
        ("return None", None),
    ],
    ids=["tuple-local", "tuple-call", "expression", "trailing-none", "none"],
)
def test_lifted_operands_get_none_after_the_grads_bwd_returns(bwd_body, expected_gx):
    """torch <= 2.9 took bwd's value as autograd does (a tuple, or one gradient); the lifted
    operand W, with no slot of its own there, gets None after them."""
    import torch

    source = V29.format(fwd_body="return x * w, [x]", bwd_body=bwd_body)
    result = flatten(source, path="v29.py")
    assert _codes(result) == ["INL001"], [d.format() for d in result.diagnostics]
    module = load_module(result.source, "v29_lifted")
    x = torch.randn(3, requires_grad=True)
    g = torch.randn(3)
    (gx, gw) = torch.autograd.grad(module.f(x), [x, module.W], g, allow_unused=True)
    assert gw is None
    if expected_gx is None:
        assert gx is None
    else:
        assert torch.equal(gx, eval(expected_gx, {"g": g, "x": x.detach()}))
    if _TORCH < (2, 10):  # the op itself runs this form: the rewrite must agree with it
        original = load_module(source, "v29_lifted_original")
        (ox, ow) = torch.autograd.grad(original.f(x), [x, original.W], g, allow_unused=True)
        assert ow is None and (ox is None if gx is None else torch.equal(ox, gx))


@pytest.mark.parametrize(
    "bwd_body",
    ["return g * x * 3, g * 5", "grads = (g * x, g * 5)\n    return grads", "return (g * x).chunk(1) + (g,)"],
)
def test_a_bwd_returning_too_many_gradients_still_fails(bwd_body):
    """The op raised (one tensor operand, two gradients): the extra one must not become the
    lifted operand's gradient."""
    import torch

    source = V29.format(fwd_body="return x * w, [x]", bwd_body=bwd_body)
    result = flatten(source, path="v29.py")
    assert _codes(result) == ["INL001"]
    module = load_module(result.source, "v29_too_many")
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        torch.autograd.grad(module.f(x).sum(), [x, module.W], allow_unused=True)
    if _TORCH < (2, 10):  # as the op itself does
        original = load_module(source, "v29_too_many_original")
        with pytest.raises(RuntimeError, match="incorrect number of gradients"):
            torch.autograd.grad(original.f(x).sum(), [x, original.W], allow_unused=True)


def test_a_refused_call_keeps_its_slot_under_the_comment():
    """thunderfx prints one comment for ``C.apply(B.apply(A.apply(x)))`` and the calls in
    the order they run; a call refused before it is lowered (here A's: its body class is
    missing) still stands for A, so B's and C's calls keep their own names."""
    from tests.support.golden import GOLDEN

    source = (GOLDEN / "hop_chained_v29_repro" / "input.py").read_text()
    source = source.replace("    class fwd_body_0(torch.nn.Module):", "    class fwd_body_0_renamed(torch.nn.Module):")
    result = flatten(source, path="repro.py")
    assert _codes(result) == ["INL200", "INL001", "INL001"]
    assert list(result.flattened) == ["SaveIntermediate", "NonTensorAttr"]


def test_a_bytes_annotation_in_a_dumped_bwd_is_no_fx_tensor_annotation():
    """fx annotates a dump's locals with strings (``mul_1: "f32[3]"``); a bytes literal there
    says nothing (it crashed the engine): the returned local is then taken as torch <= 2.9
    took any value, and the file computes what the golden output computes."""
    from tests.support.golden import GOLDEN

    case = GOLDEN / "hop_v29_lifted_bwd_shapes"
    source = (case / "input.py").read_text()
    changed = source.replace('mul_1: "f32[3]" = mul * 3', 'mul_1: b"f32[3]" = mul * 3')
    assert changed != source
    result = flatten(changed, path="dump.py")
    assert _codes(result) == ["INL001"] * 3, [d.format() for d in result.diagnostics]
    expected = run_all(load_module((case / "output.py").read_text(), "v29_lifted_golden_output"))
    assert_same(expected, run_all(load_module(result.source, "v29_lifted_bytes_annotation")))


def test_a_call_takes_names_only_from_the_comment_right_above_its_group():
    """``# No stacktrace found ...`` starts a group of its own: the call after it does not
    take a name from the comment of the group before."""
    from tests.support.golden import GOLDEN

    source = (GOLDEN / "hop_chained_v29_repro" / "input.py").read_text()
    second = "        autograd_function_apply_1: "
    assert source.count(second) == 1
    source = source.replace(second, "        # No stacktrace found for following nodes\n" + second)
    result = flatten(source, path="repro.py")
    assert _codes(result) == ["INL001"] * 3
    # one call under a comment that names three Functions, two under one that names
    # none: no call can be told which Function it stands for
    assert [name.rstrip("_0123456789") for name in result.flattened] == ["autograd_function"] * 3


def test_an_op_call_inside_an_op_body_is_flattened_on_its_own_and_the_outer_one_refused():
    """The outer flat function would copy the inner call before it is flattened, and a
    second pass would then change the file: the outer call stays an op call (INL202)."""
    source = """\
import torch


def inner_fwd(x):
    return (x * 2,), (x,)


def inner_bwd(g, x):
    return (g * x * 3,)


def outer_fwd(x):
    (y,) = torch.ops.higher_order.autograd_function_apply(inner_fwd, inner_bwd, x, non_differentiable_idx=[], saved_for_backward_idx=[0])
    return (y.sin(),), (x,)


def outer_bwd(g, x):
    return (g * x * 5,)


def f(x):
    return torch.ops.higher_order.autograd_function_apply(outer_fwd, outer_bwd, x, non_differentiable_idx=[], saved_for_backward_idx=[0])
"""
    result = flatten(source, path="nested.py")
    assert sorted(_codes(result)) == ["INL001", "INL202"], [d.format() for d in result.diagnostics]
    assert list(result.flattened) == ["inner"]
    assert flatten(result.source, path="nested.py").source == result.source

"""Minimal modules found by differential fuzzing (tests/fuzz/test_fuzz.py, scripts/fuzz_long.py).

Each is a shrunk generated module, hand-tidied. ``xfail(strict=True)`` ones still differ
between the original and the rewrite: when a fix lands the test XPASSes and fails, so
drop the marker and the matching entry from ``fuzz_gen.KNOWN_BUGS`` (which also feeds
``test_fuzz.CI_AVOID``). The unmarked ones differed (or crashed the engine) at
a86c40a or later and are fixed since (the commit is named); they stay as regression tests.
"""

from __future__ import annotations

import warnings

import pytest
import torch

from inliner import flatten
from tests.support.fuzz_oracle import check
from tests.support.harness import load_module

pytestmark = pytest.mark.filterwarnings("ignore")


def assert_rewrite_behaves_like_original(source: str, name: str = "F") -> None:
    outcome = check(source, [name])
    assert outcome.flattened == (name,) or name in outcome.refused, outcome
    assert not outcome.failures, "\n".join(outcome.failures)


LATE_MARK_DIRTY = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, flag):
        x.mul_(2.0)
        if flag:
            return x
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 3.0, None


def scenario_early_path():
    a = torch.randn(3, requires_grad=True)
    b = a.clone()
    y = F.apply(b, True)
    return [a], (y, y is b, y._is_view())
"""

LATE_MATERIALIZE = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, flag):
        if flag:
            return x * 2.0, x * 3.0
        ctx.set_materialize_grads(False)
        return x * 2.0, x * 3.0

    @staticmethod
    def backward(ctx, g1, g2):
        if g2 is None:
            return g1 * 1000.0, None
        return g1 + g2, None


def scenario_early_path():
    x = torch.randn(3, requires_grad=True)
    a, b = F.apply(x, True)
    return [x], a
"""

SAVED_UNREAD = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 3.0


def scenario_mutate_saved_but_unread():
    x = torch.randn(3, requires_grad=True)
    x2 = x * 1
    y = F.apply(x2)
    x2.add_(1.0)  # original: no error (backward never unpacks saved_tensors)
    return [x], y
"""

ONE_PATH_ATTR_ALIAS = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, flag):
        if flag:
            ctx.t = x
        ctx.save_for_backward(x)
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.t * 3.0, None


def scenario_path_without_attr():
    x = torch.randn(3, requires_grad=True)
    return [x], F.apply(x, False)
"""

SETUP_NONDIFF_CRASH = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * 2.0, (x > 0).float()

    @staticmethod
    def setup_context(ctx, inputs, output):
        out, mask = output
        ctx.mark_non_differentiable(mask)

    @staticmethod
    def backward(ctx, g, g_mask):
        return g * 3.0


def scenario_basic():
    x = torch.randn(3, requires_grad=True)
    return [x], F.apply(x)
"""

SETUP_CTX_NAME_CRASH = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(a, c):
        return a * c

    @staticmethod
    def setup_context(c, inputs, output):
        a, c = inputs
        c.save_for_backward(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a * 3.0, None


def scenario_basic():
    a = torch.randn(3, requires_grad=True)
    return [a], F.apply(a, torch.randn(3))
"""

SAVE_RETURNED_INPUT = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * 3.0


def scenario_identity():
    x = torch.randn(3, requires_grad=True)
    return [x], F.apply(x)
"""

AMP_KEYWORDS = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cpu")
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    @torch.amp.custom_bwd(device_type="cpu")
    def backward(ctx, g):
        return g * ctx.k * 3.0, None


def scenario_keyword():
    x = torch.randn(3, requires_grad=True)
    return [x], F.apply(x, k=2.0)
"""

UNSAVED_READ_TWICE = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, flag):
        if flag:
            ctx.save_for_backward(x)
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        saved = ctx.saved_tensors
        return g * 3.0, None


def scenario_second_backward():
    x = torch.randn(3, requires_grad=True)
    y = F.apply(x, False)
    torch.autograd.grad(y.sum(), [x])
    return [x], y  # the harness backpropagates again: the original raises (freed)
"""


def test_late_dirty():
    """Regression (fixed in d718310): ctx.mark_dirty after an early return is replayed on every path: the early
    path's output becomes the dirty input instead of a view
    """
    assert_rewrite_behaves_like_original(LATE_MARK_DIRTY)


def test_late_materialize():
    """Regression (fixed in d718310): ctx.set_materialize_grads(False) after an early return is replayed on
    every path: the early path's backward gets None instead of zeros
    """
    assert_rewrite_behaves_like_original(LATE_MATERIALIZE)


def test_saved_unread_version():
    """Regression (fixed in 8c34f0b): the carrier unpacked saved tensors backward never reads, so a legal
    in-place change raised a version error (and a second backward raised "freed")."""
    assert_rewrite_behaves_like_original(SAVED_UNREAD)


def test_one_path_attr_alias():
    """Regression (fixed in d718310): a ctx attribute set on one path only passes the INL103 check when its
    value is a name that is also saved; the rewrite reads it on the other path where the original raises
    AttributeError
    """
    assert_rewrite_behaves_like_original(ONE_PATH_ATTR_ALIAS)


def test_setup_nondiff_crash():
    """Regression (fixed in d718310): the engine raises KeyError (position of a synthesized node) when it
    refuses a setup_context class: mark_non_differentiable on an element unpacked from `output`
    """
    assert_rewrite_behaves_like_original(SETUP_NONDIFF_CRASH)


def test_setup_ctx_name_crash():
    """Regression (fixed in d718310): the engine raises KeyError when setup_context's ctx parameter shares a
    name with a forward parameter (renamed ctx then counts as rebound; refusing crashes)
    """
    assert_rewrite_behaves_like_original(SETUP_CTX_NAME_CRASH)


FLOAT_ATTR_ALIAS = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k, flag):
        ctx.a = k
        if flag:
            ctx.b = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.a * ctx.b * 3.0, None, None


def scenario_path_without_b():
    x = torch.randn(3, requires_grad=True)
    return [x], F.apply(x, 2.0, False)
"""


def test_float_attr_alias_on_one_path():
    """Regression (fixed in d718310): `ctx.b = k` on one path passed INL103 because `ctx.a = k` shares the
    name.
    """
    assert_rewrite_behaves_like_original(FLOAT_ATTR_ALIAS)


def test_save_returned_input():
    """Regression (fixed after a86c40a): saving an input that forward returns as-is raised in the setup_context
    carrier.
    """
    assert_rewrite_behaves_like_original(SAVE_RETURNED_INPUT)


def test_amp_keywords():
    """Regression (fixed after a86c40a): custom_fwd hides forward's names from apply's keyword binding, so the
    original raises TypeError; the rewrite accepted the keyword."""
    assert_rewrite_behaves_like_original(AMP_KEYWORDS)


def test_unsaved_read_twice():
    """Regression (fixed after a86c40a): reading ctx.saved_tensors after the graph was freed raises even when
    nothing was saved; the carrier skipped the read."""
    assert_rewrite_behaves_like_original(UNSAVED_READ_TWICE)


TUPLE_ATTR = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * 2.0

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.pair = (x, 3.0)

    @staticmethod
    def backward(ctx, g):
        x, k = ctx.pair
        return g * x * x * k
"""


def test_tuple_attr_holding_an_input_under_grad_of_grad():
    """Regression (fixed in 8c34f0b): a tensor inside a tuple ctx attribute was captured once from forward
    instead of re-bound per torch.func level (docs/semantics.md §16 residual trap): grad-of-grad was silently 0."""
    result = flatten(TUPLE_ATTR)
    assert result.flattened == ("F",)
    original = load_module(TUPLE_ATTR, "tuple_attr_o")
    rewritten = load_module(result.source, "tuple_attr_r")
    x = torch.tensor([1.0, 2.0, -1.5])

    def grad_of_grad(fn):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.func.grad(lambda t: torch.func.grad(lambda u: fn(u).sum())(t).sum())(x)

    expected = grad_of_grad(original.F.apply)
    assert torch.equal(expected, torch.tensor([6.0, 12.0, -9.0]))
    torch.testing.assert_close(grad_of_grad(rewritten.F), expected, rtol=0, atol=0)


def test_save_returned_input_under_torch_func():
    """Regression: torch.func runs the setup_context carrier, which rejected an input that is both
    saved and returned as-is (eager autograd of the original accepts it); it now saves the output."""
    result = flatten(SAVE_RETURNED_INPUT)
    assert result.flattened == ("F",)
    original = load_module(SAVE_RETURNED_INPUT, "save_returned_o")
    rewritten = load_module(result.source, "save_returned_r")
    x = torch.tensor([1.0, 2.0, -1.5])
    leaf = x.clone().requires_grad_()
    (expected,) = torch.autograd.grad(original.F.apply(leaf), leaf, torch.ones(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, vjp_fn = torch.func.vjp(rewritten.F, x)
        (got,) = vjp_fn(torch.ones(3))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


DUPLICATE_PARAMETER = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(c, a, c):
        return a * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 3.0, None
"""


def test_file_that_does_not_compile_is_left_alone():
    """Regression: a file that parses but does not compile (duplicate parameter `c`: the ctx name equals
    a parameter) was flattened into code that compiles instead of being left alone."""
    with pytest.raises(SyntaxError):
        compile(DUPLICATE_PARAMETER, "<input>", "exec")
    result = flatten(DUPLICATE_PARAMETER)
    assert result.source == DUPLICATE_PARAMETER and not result.flattened


STATEMENT_AFTER_EMPTIED_BLOCK = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t0, t1, t2, t3, opt, flag, k):
        h0 = t3.exp() * 0.1
        h1 = h0 ** 2
        m0 = (h0 > 0).float()
        ctx.mark_non_differentiable(m0)
        ctx.t_0 = t2
        ctx.pair_1 = (t1, (1.0 if opt is None else opt))
        ctx.ta_2, ctx.tb_2 = h0, k
        if not flag:
            ctx.s_3 = (1.0 if opt is None else opt)
            ctx.s_4 = k
            ctx.save_for_backward(None, t2)
        t1 = t1 * 3.0 + 1.0
        t3 = t3 * 3.0 + 1.0
        out0 = h1 + t1 * 0.5
        ctx.o_5 = out0
        return out0, m0, t3.argmax()

    @staticmethod
    def backward(c, *grads):
        gsum = grads[0] * 1.5
        grad_t0 = gsum * c.tb_2 * c.o_5 * 2.0 + gsum * 0.25
        grad_t1 = gsum * 3.0 + gsum * 0.5
        grad_t2 = gsum * c.pair_1[0] * c.pair_1[1] * c.ta_2 * c.o_5 * 4.0 + gsum * 0.75
        grad_t3 = gsum * 5.0 + gsum * 1.0
        return grad_t0, grad_t1, grad_t2, grad_t3, None, None, None


def _rel(out, args):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [
        [o is a for a in args] + [getattr(o, "_base", None) is a for a in args]
        for o in outs
        if isinstance(o, torch.Tensor)
    ]


def _total(out):
    outs = out if isinstance(out, tuple) else (out,)
    return sum(o.float().sum() for o in outs if isinstance(o, torch.Tensor) and o.requires_grad)




def scenario_basic_true():
    t0_leaf = torch.randn((2, 3), requires_grad=True)
    t1_leaf = torch.randn((2, 3), requires_grad=True)
    t2_leaf = torch.randn((2, 3), requires_grad=True)
    t3_leaf = torch.randn((2, 3), requires_grad=True)
    out = F.apply(t0_leaf, t1_leaf, t2_leaf, t3_leaf, None, True, 2.0)
    return [t0_leaf, t1_leaf, t2_leaf, t3_leaf], (out, _rel(out, (t0_leaf, t1_leaf, t2_leaf, t3_leaf)))


def scenario_double_true():
    t0_leaf = torch.randn((2, 3), requires_grad=True)
    t1_leaf = torch.randn((2, 3), requires_grad=True)
    t2_leaf = torch.randn((2, 3), requires_grad=True)
    t3_leaf = torch.randn((2, 3), requires_grad=True)
    out = F.apply(t0_leaf, t1_leaf, t2_leaf, t3_leaf, None, True, 2.0)
    grads = torch.autograd.grad(_total(out), [t0_leaf, t1_leaf, t2_leaf, t3_leaf], create_graph=True, allow_unused=True)
    return [t0_leaf, t1_leaf, t2_leaf, t3_leaf], grads


def scenario_basic_false():
    t0_leaf = torch.randn((2, 3), requires_grad=True)
    t1_leaf = torch.randn((2, 3), requires_grad=True)
    t2_leaf = torch.randn((2, 3), requires_grad=True)
    t3_leaf = torch.randn((2, 3), requires_grad=True)
    out = F.apply(t0_leaf, t1_leaf, t2_leaf, t3_leaf, None, False, 2.0)
    return [t0_leaf, t1_leaf, t2_leaf, t3_leaf], (out, _rel(out, (t0_leaf, t1_leaf, t2_leaf, t3_leaf)))


def scenario_double_false():
    t0_leaf = torch.randn((2, 3), requires_grad=True)
    t1_leaf = torch.randn((2, 3), requires_grad=True)
    t2_leaf = torch.randn((2, 3), requires_grad=True)
    t3_leaf = torch.randn((2, 3), requires_grad=True)
    out = F.apply(t0_leaf, t1_leaf, t2_leaf, t3_leaf, None, False, 2.0)
    grads = torch.autograd.grad(_total(out), [t0_leaf, t1_leaf, t2_leaf, t3_leaf], create_graph=True, allow_unused=True)
    return [t0_leaf, t1_leaf, t2_leaf, t3_leaf], grads


def scenario_keywords():
    t0_leaf = torch.randn((2, 3), requires_grad=True)
    t1_leaf = torch.randn((2, 3), requires_grad=True)
    t2_leaf = torch.randn((2, 3), requires_grad=True)
    t3_leaf = torch.randn((2, 3), requires_grad=True)
    out = F.apply(t0_leaf, t1_leaf, t2_leaf, t3_leaf, opt=None, flag=False, k=2.0)
    return [t0_leaf, t1_leaf, t2_leaf, t3_leaf], (out, _rel(out, (t0_leaf, t1_leaf, t2_leaf, t3_leaf)))


def scenario_partial_grad():
    t0_leaf = torch.randn((2, 3))
    t1_leaf = torch.randn((2, 3))
    t2_leaf = torch.randn((2, 3), requires_grad=True)
    t3_leaf = torch.randn((2, 3), requires_grad=True)
    out = F.apply(t0_leaf, t1_leaf, t2_leaf, t3_leaf, None, False, 2.0)
    return [t2_leaf, t3_leaf], (out, _rel(out, (t0_leaf, t1_leaf, t2_leaf, t3_leaf)))


def scenario_version():
    t0_leaf = torch.randn((2, 3), requires_grad=True)
    t0_arg = t0_leaf * 1
    t1_leaf = torch.randn((2, 3), requires_grad=True)
    t1_arg = t1_leaf * 1
    t2_leaf = torch.randn((2, 3), requires_grad=True)
    t2_arg = t2_leaf * 1
    t3_leaf = torch.randn((2, 3), requires_grad=True)
    t3_arg = t3_leaf * 1
    out = F.apply(t0_arg, t1_arg, t2_arg, t3_arg, None, False, 2.0)
    t1_arg.add_(1.0)
    return [t0_leaf, t1_leaf, t2_leaf, t3_leaf], out


def scenario_twice():
    t0_leaf = torch.randn((2, 3), requires_grad=True)
    t1_leaf = torch.randn((2, 3), requires_grad=True)
    t2_leaf = torch.randn((2, 3), requires_grad=True)
    t3_leaf = torch.randn((2, 3), requires_grad=True)
    out = F.apply(t0_leaf, t1_leaf, t2_leaf, t3_leaf, None, False, 2.0)
    torch.autograd.grad(_total(out), [t0_leaf, t1_leaf, t2_leaf, t3_leaf], allow_unused=True)
    return [t0_leaf, t1_leaf, t2_leaf, t3_leaf], out


def scenario_no_grad():
    t0_leaf = torch.randn((2, 3), requires_grad=True)
    t1_leaf = torch.randn((2, 3), requires_grad=True)
    t2_leaf = torch.randn((2, 3), requires_grad=True)
    t3_leaf = torch.randn((2, 3), requires_grad=True)
    with torch.no_grad():
        out = F.apply(t0_leaf, t1_leaf, t2_leaf, t3_leaf, None, False, 2.0)
    return [t0_leaf, t1_leaf, t2_leaf, t3_leaf], (out, _rel(out, (t0_leaf, t1_leaf, t2_leaf, t3_leaf)))


def scenario_subset():
    t0_leaf = torch.randn((2, 3), requires_grad=True)
    t1_leaf = torch.randn((2, 3), requires_grad=True)
    t2_leaf = torch.randn((2, 3), requires_grad=True)
    t3_leaf = torch.randn((2, 3), requires_grad=True)
    out = F.apply(t0_leaf, t1_leaf, t2_leaf, t3_leaf, None, False, 2.0)
    return [t0_leaf, t1_leaf, t2_leaf, t3_leaf], out[0] if isinstance(out, tuple) else out


def probe_0(p_t0, p_t1, p_t2, p_t3):
    out = F.apply(p_t0, p_t1, p_t2, p_t3, None, True, 2.0)
    outs = out if isinstance(out, tuple) else (out,)
    return tuple(outs[j] for j in (0,))
"""


def test_statement_after_an_emptied_block_survives():
    """Regression (seed 901563 of the long profile): dropping `ctx.s_4 = k` emptied a line inside
    an `if`; the placeholder kept for its comments was freed and a later node reused its id, so
    the next top-level statement (`t1 = t1 * 3.0 + 1.0`) was dropped too."""
    assert "t1 = t1 * 3.0 + 1.0" in flatten(STATEMENT_AFTER_EMPTIED_BLOCK).source
    assert_rewrite_behaves_like_original(STATEMENT_AFTER_EMPTIED_BLOCK, "F")


ATTR_READ_INSIDE_ATTR_SET = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.s_0 = k
        ctx.d_1 = ctx.s_0 * 2.0 + 1.0
        ctx.s_0 = ctx.s_0 * 2.0
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.d_1 * ctx.s_0, None


def scenario_basic():
    x = torch.randn(3, requires_grad=True)
    return [x], F.apply(x, 1.5)
"""


def test_attr_read_inside_attr_set():
    """Found by the `attr_reads_attr` generator feature (fixed in e248e1f): a ctx read
    inside the value of a ctx set was emitted as is, so fwd read `ctx` (NameError)."""
    assert_rewrite_behaves_like_original(ATTR_READ_INSIDE_ATTR_SET)


DELETED_TWICE = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.tb_1 = 2.0
        return x * 3

    @staticmethod
    def backward(ctx, g):
        del ctx.tb_1
        return g * 5


def scenario_second_backward():
    x = torch.randn(3, requires_grad=True)
    out = F.apply(x)
    first = torch.autograd.grad(out.sum(), [x], retain_graph=True)
    return [x], (out, first)
"""


def test_a_second_del_of_a_ctx_attribute_names_the_backward_node():
    """Found by the `bwd_drop` generator feature (seed 2): the ctx record's second `del`
    raised Python's own message, naming `Record`; torch's names `FBackward`."""
    assert "ctx_record=True" in flatten(DELETED_TWICE).source
    assert_rewrite_behaves_like_original(DELETED_TWICE)


EFFECT_BEFORE_SAVED_UNPACK = """\
import torch

LOG = []


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        LOG.append("backward")
        (x,) = ctx.saved_tensors
        return g * x * 3


def side_effect_log():
    return list(LOG)


def reset_side_effects():
    LOG.clear()


def scenario_twice():
    x = torch.randn(3, requires_grad=True)
    y = F.apply(x * 1)
    torch.autograd.grad(y.sum(), [x])
    return [x], y  # the harness's backward fails: the saved tensors are freed
"""


def test_effect_before_saved_unpack():
    """A backward statement before ``ctx.saved_tensors`` runs in the original although the
    unpacking then raises: bwd reads the saved tensors where the original did, after it."""
    assert_rewrite_behaves_like_original(EFFECT_BEFORE_SAVED_UNPACK)


COMPILED_MARK_DIRTY = """\
import torch


class ScaledOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t0, t1, t2, t3, flag, n):
        t2.mul_(1.0)
        ctx.mark_dirty(t2)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(t0)
        return t2

    @staticmethod
    def backward(ctx, g0):
        saved = ctx.saved_tensors
        gsum = (g0 if g0 is not None else 1000.0) * 1.5
        grad_t0 = gsum * saved[0] * 2.0 + gsum * 0.25
        grad_t1 = gsum * 3.0 + gsum * 0.5
        grad_t2 = gsum * saved[0] * 4.0 + gsum * 0.75
        grad_t3 = gsum * 5.0 + gsum * 1.0
        return grad_t0, grad_t1, grad_t2, grad_t3, None, None


def scenario_basic():
    t0_leaf = torch.randn((2, 3), requires_grad=True)
    t1_leaf = torch.randn((2, 3), requires_grad=True)
    t2_leaf = torch.randn((2, 3), requires_grad=True)
    t2_arg = t2_leaf.clone()
    t3_leaf = torch.randn((2, 3), requires_grad=True)
    out = ScaledOp.apply(t0_leaf, t1_leaf, t2_arg, t3_leaf, False, 1)
    return [t0_leaf, t1_leaf, t2_leaf, t3_leaf], out
"""


def test_compiled_dirty_input_keeps_its_custom_gradient():
    """Seed 16 of the compiled comparison: under torch.compile the rewrite's gradient of the
    dirty input was the bare cotangent (eager: the custom one); the compiled original drops the
    other inputs' gradients instead. The rewrite now gives eager's (fixed by the graph shim's
    clone-and-copy of a dirty input, inliner.runtime._dynamo._dirty_call)."""
    outcome = check(COMPILED_MARK_DIRTY, ["ScaledOp"], func=False, compiled=True)
    assert outcome.flattened == ("ScaledOp",)
    assert not outcome.failures, "\n".join(outcome.failures)

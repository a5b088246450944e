"""torch.func on rewritten code: works, matches eager autograd of the original, even where
the original (combined ``forward(ctx, ...)`` style) is rejected by torch.func."""

from __future__ import annotations

import functools

import pytest
import torch
import torch.func

from tests.support.golden import GOLDEN
from tests.support.harness import TORCH_2_13, load_module

#: torch 2.9's ``Function.apply`` takes no keyword arguments (the original raises on them too,
#: docs/semantics.md "[2.9 vs 2.13] kwargs"), so keyword call sites are 2.13's alone
KEYWORDS_IN_APPLY = TORCH_2_13
_NEEDS_KEYWORDS = pytest.mark.skipif(not KEYWORDS_IN_APPLY, reason="torch 2.9's apply takes no keyword arguments")

SETUP_CONTEXT_MESSAGE = "must override the setup_context staticmethod"


def _pair(case: str):
    original = load_module((GOLDEN / case / "input.py").read_text(), f"{case}_o", GOLDEN / case)
    rewritten = load_module((GOLDEN / case / "output.py").read_text(), f"{case}_r", GOLDEN / case)
    return original, rewritten


# (case, name of the Function, how to call it on one tensor, leading shape of that tensor)
CALLS = [
    ("basic_linear", "MyLinear", lambda F, x: F.apply(x, torch.ones(2, 4), 0.5), (3, 4)),
    ("attrs_and_rebinding", "Scale", lambda F, x: F.apply(x, 3.0), (4,)),
    ("double_backward", "Cube", lambda F, x: F.apply(x), (3,)),
    ("needs_input_grad", "Mul", lambda F, x: F.apply(x, torch.full((3,), 2.0)), (3,)),
    ("multi_output_nondiff", "SortTop", lambda F, x: F.apply(x)[0], (5,)),
    ("return_input", "ScaleGrad", lambda F, x: F.apply(x, 0.25), (3,)),
]


def _eager_grad(F, call, x):
    x = x.clone().requires_grad_()
    (g,) = torch.autograd.grad(call(F, x).sum(), x)
    return g


@pytest.mark.filterwarnings("ignore:There is a performance drop")
@pytest.mark.parametrize("case,name,call,shape", CALLS, ids=[c[0] for c in CALLS])
def test_grad_vjp_jacrev_match_eager(case, name, call, shape):
    original, rewritten = _pair(case)
    F_orig, F_new = getattr(original, name), getattr(rewritten, name)
    torch.manual_seed(0)
    x = torch.randn(*shape)
    expected = _eager_grad(F_orig, call, x)

    with pytest.raises(RuntimeError, match=SETUP_CONTEXT_MESSAGE):
        torch.func.grad(lambda t: call(F_orig, t).sum())(x)

    got = torch.func.grad(lambda t: call(F_new, t).sum())(x)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)

    out, vjp_fn = torch.func.vjp(lambda t: call(F_new, t), x)
    (via_vjp,) = vjp_fn(torch.ones_like(out))
    torch.testing.assert_close(via_vjp, expected, rtol=0, atol=0)

    jac = torch.func.jacrev(lambda t: call(F_new, t).sum())(x)
    torch.testing.assert_close(jac, expected, rtol=0, atol=0)


def test_grad_of_grad_matches_eager_double_backward():
    original, rewritten = _pair("double_backward")
    x = torch.tensor([2.0, -1.0, 0.5])
    xe = x.clone().requires_grad_()
    (gx,) = torch.autograd.grad(original.Cube.apply(xe).sum(), xe, create_graph=True)
    (expected,) = torch.autograd.grad(gx.sum(), xe)
    got = torch.func.grad(lambda t: torch.func.grad(lambda u: rewritten.Cube(u).sum())(t).sum())(x)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


def test_vmap_where_the_original_declares_a_rule():
    original, rewritten = _pair("setup_context_style")
    x = torch.randn(4, 3)
    torch.testing.assert_close(torch.vmap(rewritten.Exp)(x), torch.vmap(original.Exp.apply)(x), rtol=0, atol=0)
    jac_new = torch.func.jacrev(lambda t: rewritten.Exp(t))(x[0])
    jac_old = torch.func.jacrev(lambda t: original.Exp.apply(t))(x[0])
    torch.testing.assert_close(jac_new, jac_old, rtol=0, atol=0)


@pytest.mark.parametrize("case,name,call,shape", CALLS[:3], ids=[c[0] for c in CALLS[:3]])
def test_a_tensor_leaked_from_a_transform_is_unwrapped_like_function_apply(case, name, call, shape):
    """``Function.apply`` unwraps dead functorch wrappers (a tensor kept from inside a
    finished transform); the flat callable's fast path skips ``Function.apply``, so it
    must send such a tensor the long way, and give the original's result."""
    original, rewritten = _pair(case)
    F_orig, F_new = getattr(original, name), getattr(rewritten, name)
    leaked = []

    def keep(t):
        leaked.append(t)
        return t.sum()

    torch.func.grad(keep)(torch.randn(*shape))
    (dead,) = leaked
    assert torch._C._functorch.is_functorch_wrapped_tensor(dead)
    expected = call(F_orig, dead)
    got = call(F_new, dead)
    assert not torch._C._functorch.is_functorch_wrapped_tensor(got)
    assert type(got) is type(expected)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    assert got.requires_grad == expected.requires_grad


# -- keyword call sites under torch.func ----------------------------------------------
# Combined-style originals (torch.func rejects them, so eager autograd of the original is
# the reference), each backward deliberately not the true derivative. torch 2.13's apply
# binds keywords to forward's positional slots without filling defaults, so backward
# returns as many gradients as there are slots (``len(ctx.needs_input_grad)``).

KEYWORD_SOURCE = """
import torch


class Affine(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale=2.0, shift=None):
        ctx.save_for_backward(x)
        ctx.scale = scale
        out = x * x * scale
        if shift is not None:
            out = out + shift.sin()
        return out

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        grads = (g * x * ctx.scale * 3.0 + 1.0, None, g * 5.0)
        return grads[: len(ctx.needs_input_grad)]


class KwOnly(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, *, scale=2.0):
        ctx.save_for_backward(w)
        ctx.scale = scale
        return x * w * scale

    @staticmethod
    def backward(ctx, g):
        (w,) = ctx.saved_tensors
        return g * w * ctx.scale * 3.0, g * ctx.scale + 0.5


class Star(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, *rest, scale=1.5):
        ctx.n = len(rest)
        ctx.scale = scale
        return x * scale + sum(r * r for r in rest)

    @staticmethod
    def backward(ctx, g):
        return (g * 7.0 * ctx.scale,) + (g * 3.0,) * ctx.n
"""


@functools.cache
def _keyword_pair():
    from inliner.engine import flatten

    result = flatten(KEYWORD_SOURCE, path="keyword_calls.py")
    assert set(result.flattened) == {"Affine", "KwOnly", "Star"}, result.diagnostics
    return load_module(KEYWORD_SOURCE, "keywords_o"), load_module(result.source, "keywords_r")


# (name of the Function, a call with tensors as positional parameters of the lambda)
KEYWORD_CALLS = {
    "keyword_with_default": ("Affine", lambda F, x, w: F(x, scale=3.0)),
    "keywords_out_of_order": ("Affine", lambda F, x, w: F(shift=w, x=x, scale=0.5)),
    "tensor_keyword": ("Affine", lambda F, x, w: F(x, 0.25, shift=w)),
    "all_keywords": ("Affine", lambda F, x, w: F(x=x, scale=3.0, shift=w)),
    "kwonly_default": ("KwOnly", lambda F, x, w: F(x, w=w)),
    "kwonly_default_positional": ("KwOnly", lambda F, x, w: F(x, w)),
    "star_args_keyword": ("Star", lambda F, x, w: F(x=x)),
    "star_args_positional": ("Star", lambda F, x, w: F(x, w, x)),
}


def _call(module, name, call):
    F = getattr(module, name)
    return lambda x, w: call(F.apply, x, w)


def _eager_vjp(fn, x, w, cot):
    x, w = x.clone().requires_grad_(), w.clone().requires_grad_()
    out = fn(x, w)
    gx, gw = torch.autograd.grad(out, (x, w), cot, allow_unused=True)
    return out.detach(), tuple(torch.zeros_like(p) if g is None else g for g, p in ((gx, x), (gw, w)))


@pytest.mark.filterwarnings("ignore:There is a performance drop")
@pytest.mark.parametrize("label", list(KEYWORD_CALLS))
@_NEEDS_KEYWORDS
def test_keyword_call_sites_under_grad_vjp_jacrev_match_eager(label):
    original, rewritten = _keyword_pair()
    name, call = KEYWORD_CALLS[label]
    orig, new = _call(original, name, call), _call(rewritten, name, call)
    generator = torch.Generator().manual_seed(0)
    x, w, cot = (torch.randn(3, generator=generator) for _ in range(3))
    expected_out, expected = _eager_vjp(orig, x, w, cot)

    out, vjp_fn = torch.func.vjp(new, x, w)
    torch.testing.assert_close(out, expected_out, rtol=0, atol=0)
    for got, want in zip(vjp_fn(cot), expected):
        torch.testing.assert_close(got, want, rtol=0, atol=0)

    _, summed = _eager_vjp(orig, x, w, torch.ones(3))
    got = torch.func.grad(lambda a, b: new(a, b).sum(), argnums=(0, 1))(x, w)
    for g, want in zip(got, summed):
        torch.testing.assert_close(g, want, rtol=0, atol=0)

    # the full Jacobian: jacrev vmaps the carrier's backward over the basis cotangents
    rows = [_eager_vjp(orig, x, w, torch.eye(3)[i])[1] for i in range(3)]
    jac = torch.func.jacrev(new, argnums=(0, 1))(x, w)
    for k in range(2):
        torch.testing.assert_close(jac[k], torch.stack([r[k] for r in rows]), rtol=0, atol=0)


@pytest.mark.filterwarnings("ignore:There is a performance drop")
@pytest.mark.parametrize("label", list(KEYWORD_CALLS))
@_NEEDS_KEYWORDS
def test_keyword_call_sites_under_vmap_match_eager_per_sample(label):
    """The carrier has torch's generated vmap rule (the originals declare none)."""
    original, rewritten = _keyword_pair()
    name, call = KEYWORD_CALLS[label]
    orig, new = _call(original, name, call), _call(rewritten, name, call)
    generator = torch.Generator().manual_seed(1)
    xs, ws = torch.randn(4, 3, generator=generator), torch.randn(4, 3, generator=generator)
    per_sample = [_eager_vjp(orig, xs[i], ws[i], torch.ones(3)) for i in range(4)]
    torch.testing.assert_close(torch.vmap(new)(xs, ws), torch.stack([p[0] for p in per_sample]))
    grads = torch.vmap(torch.func.grad(lambda a, b: new(a, b).sum(), argnums=(0, 1)))(xs, ws)
    for k in range(2):
        torch.testing.assert_close(grads[k], torch.stack([p[1][k] for p in per_sample]))


# Calls that eager's apply rejects (before forward runs, or at backward for a gradient
# count): under torch.func the rewrite raises the same error, not torch.func's own
# ``custom_function_call() got an unexpected keyword argument``.
KEYWORD_ERRORS = {
    "unknown_keyword": ("Affine", lambda F, x, w: F(x, bias=w)),
    "gap_before_keyword": ("Affine", lambda F, x, w: F(x, shift=w)),
    "multiple_values": ("Affine", lambda F, x, w: F(x, 2.0, x=w)),
    "kwonly_passed": ("KwOnly", lambda F, x, w: F(x, w, scale=3.0)),
    "star_args_name": ("Star", lambda F, x, w: F(x, rest=w)),
    "star_args_kwonly_passed": ("Star", lambda F, x, w: F(x, w, scale=2.0)),
    "ctx_is_not_a_slot": ("Star", lambda F, x, w: F(x, ctx=w)),
}


@pytest.mark.parametrize("label", list(KEYWORD_ERRORS))
def test_keyword_errors_under_torch_func_are_eagers(label):
    original, rewritten = _keyword_pair()
    name, call = KEYWORD_ERRORS[label]
    orig, new = _call(original, name, call), _call(rewritten, name, call)
    x, w = torch.randn(3), torch.randn(3)
    with pytest.raises(Exception) as eager:
        _eager_vjp(orig, x, w, torch.ones(3))
    with pytest.raises(type(eager.value)) as under_grad:
        torch.func.grad(lambda a, b: new(a, b).sum())(x, w)
    assert str(under_grad.value) == str(eager.value)
    with pytest.raises(type(eager.value)) as under_vmap:
        torch.vmap(new)(x[None], w[None])
    assert str(under_vmap.value) == str(eager.value)


@_NEEDS_KEYWORDS
def test_setup_context_style_keywords_bind_with_defaults_as_torch_does():
    """A setup_context-style original runs under torch.func itself: its apply fills
    forward's defaults, so the rewrite must give exactly what the original gives."""
    original, rewritten = _pair("setup_context_style")
    x = torch.randn(3)
    for call in (lambda F, t: F(t), lambda F, t: F(x=t), lambda F, t: F(t, scale=0.5)):
        want = torch.func.grad(lambda t, call=call: call(original.Exp.apply, t).sum())(x)
        got = torch.func.grad(lambda t, call=call: call(rewritten.Exp, t).sum())(x)
        torch.testing.assert_close(got, want, rtol=0, atol=0)


BINDING_FORWARDS = """
import torch


def returns_inputs(ctx, *args):
    return (len(ctx.needs_input_grad), *args)


def plain(ctx, x, k, s=None):
    return (len(ctx.needs_input_grad), x, k, s)


def defaults(ctx, x, k=1.0, s=None):
    return (len(ctx.needs_input_grad), x, k, s)


def positional_only(ctx, x, /, k=1.0):
    return (len(ctx.needs_input_grad), x, k)


def keyword_only(ctx, x, *, scale=2.0):
    return (len(ctx.needs_input_grad), x, scale)


def star_args(ctx, x, *rest, scale=2.0):
    return (len(ctx.needs_input_grad), x, rest, scale)


def star_kwargs(ctx, x, k=1.0, **extra):
    return (len(ctx.needs_input_grad), x, k, extra)


@torch.amp.custom_fwd(device_type="cpu")
def wrapped(ctx, x, k=1.0):
    return (len(ctx.needs_input_grad), x, k)
"""


class _SlotCounter:
    def __init__(self, n):
        self.needs_input_grad = (False,) * n


def test_keyword_binding_is_eagers_apply():
    """``_bind_keywords`` against torch's C apply itself, on every small call pattern:
    same inputs (their count included) or the same error."""
    import itertools

    from inliner.runtime import _carriers

    namespace = load_module(BINDING_FORWARDS, "binding")
    names = ["x", "k", "s", "scale", "rest", "extra", "ctx", "foo"]
    patterns = [
        (n_args, dict(zip(keys, (10.0, 20.0))))
        for n_args in range(4)
        for size in range(1, 3)
        for keys in itertools.permutations(names, size)
    ]
    for fn_name in ("plain", "defaults", "positional_only", "keyword_only", "star_args", "star_kwargs", "wrapped"):
        forward = getattr(namespace, fn_name)
        F = type(fn_name, (torch.autograd.Function,), {"forward": staticmethod(forward), "backward": None})
        for n_args, kwargs in patterns:
            args = (1.0, 2.0, 3.0)[:n_args]
            try:
                want = _carriers._C_APPLY.__get__(None, F)(*args, **kwargs)
            except TypeError as exc:
                want = ("TypeError", str(exc))
            try:
                slots = _carriers._bind_keywords(F.forward, args, kwargs)
                got = forward(_SlotCounter(len(slots)), *slots)
            except TypeError as exc:
                got = ("TypeError", str(exc))
            assert got == want, (fn_name, args, kwargs)

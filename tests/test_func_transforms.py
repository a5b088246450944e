"""torch.func on rewritten code: works, matches eager autograd of the original, even where
the original (combined ``forward(ctx, ...)`` style) is rejected by torch.func."""

from __future__ import annotations

import pytest
import torch
import torch.func

from golden import GOLDEN
from harness import load_module

SETUP_CONTEXT_MESSAGE = "must override the setup_context staticmethod"


def _pair(case: str):
    original = load_module((GOLDEN / case / "input.py").read_text(), f"{case}_o")
    rewritten = load_module((GOLDEN / case / "output.py").read_text(), f"{case}_r")
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

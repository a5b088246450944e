"""``custom_vjp`` checks its index keywords: when it is called, and against what fwd returns
on the first call (then never again), with errors that name the function."""

from __future__ import annotations

import pytest
import torch

import inliner.runtime
import inliner.runtime._carriers
import inliner.runtime._contract
from inliner.runtime import custom_vjp


def double_fwd(x):
    return x * 2, (x,)


def double_bwd(residuals, grad):
    return grad * 3


def two_outputs_fwd(x):
    return (x * 2, x.sum()), (x,)


def two_outputs_bwd(residuals, grad, grad_sum):
    return grad * 3


def group_fwd(x):
    return x * 2, ([x],)


def not_a_pair_fwd(x):
    return x * 2


def leaf():
    return torch.ones(3, requires_grad=True)


AT_CALL = [
    pytest.param(
        {"saved_for_backward_idx": (0, 0)},
        ValueError,
        "custom_vjp for Double: saved_for_backward_idx=(0, 0) names a residual twice",
        id="twice",
    ),
    pytest.param(
        {"saved_for_forward_idx": (-1,)},
        TypeError,
        "custom_vjp for Double: saved_for_forward_idx must hold non-negative integers, got saved_for_forward_idx=(-1,)",
        id="negative",
    ),
    pytest.param(
        {"dirty_idx": ("0",)},
        TypeError,
        "custom_vjp for Double: dirty_idx must hold non-negative integers",
        id="not-an-integer",
    ),
    pytest.param(
        {"saved_for_backward_idx": (0,), "saved_tensors_idx": 0},
        ValueError,
        "custom_vjp for Double: residual 0 is both the saved_tensors group (saved_tensors_idx) and in saved_for_backward_idx=(0,)",
        id="group-also-saved",
    ),
    pytest.param(
        {"ctx_attrs": {0: "__dict__"}},
        ValueError,
        "custom_vjp for Double: ctx_attrs[0] must be an attribute name not starting with '__' or '_inliner_'",
        id="attr-dunder",
    ),
    pytest.param(
        {"ctx_attrs": {0: "_inliner_tail"}},
        ValueError,
        "custom_vjp for Double: ctx_attrs[0] must be an attribute name",
        id="attr-carrier-name",
    ),
    pytest.param(
        {"ctx_attrs": {0: "class"}},
        ValueError,
        "custom_vjp for Double: ctx_attrs[0] must be an attribute name",
        id="attr-keyword",
    ),
    pytest.param(
        {"ctx_attrs": {-1: "k"}},
        TypeError,
        "custom_vjp for Double: ctx_attrs keys must be non-negative integers, got -1",
        id="attr-negative",
    ),
    pytest.param(
        {"ctx_attrs": {0: "k", 1: "k"}},
        ValueError,
        "custom_vjp for Double: ctx_attrs={0: 'k', 1: 'k'} gives two residuals one name",
        id="attr-twice",
    ),
    pytest.param(
        {"saved_for_backward_idx": (0,), "ctx_attrs": {0: "x"}},
        ValueError,
        "custom_vjp for Double: residual 0 is saved (its tensors stay in saved_tensors), so it cannot also be",
        id="attr-saved",
    ),
    pytest.param(
        {"ctx_attrs": [(0, "x")]},
        TypeError,
        "custom_vjp for Double: ctx_attrs must map residual indices to names",
        id="attr-not-a-mapping",
    ),
]


@pytest.mark.parametrize(("keywords", "error", "message"), AT_CALL)
def test_indices_checked_when_custom_vjp_is_called(keywords, error, message):
    with pytest.raises(error) as raised:
        custom_vjp(double_fwd, double_bwd, name="Double", **keywords)
    assert str(raised.value).startswith(message)


AT_FIRST_CALL = [
    pytest.param(
        double_fwd,
        {"saved_for_backward_idx": (1,)},
        ValueError,
        "custom_vjp fwd rule double_fwd for F returned 1 residual, but saved_for_backward_idx=(1,), which names residual 1",
        id="saved-out-of-range",
    ),
    pytest.param(
        double_fwd,
        {"saved_for_forward_idx": (0, 2), "jvp": double_bwd},
        ValueError,
        "custom_vjp fwd rule double_fwd for F returned 1 residual, but saved_for_forward_idx=(0, 2), which names residual 2",
        id="forward-saved-out-of-range",
    ),
    pytest.param(
        double_fwd,
        {"ctx_attrs": {1: "k"}},
        ValueError,
        "custom_vjp fwd rule double_fwd for F returned 1 residual, but ctx_attrs={1: 'k'}, which names residual 1",
        id="attr-out-of-range",
    ),
    pytest.param(
        double_fwd,
        {"saved_tensors_idx": 0},
        TypeError,
        "custom_vjp fwd rule double_fwd for F: residual 0 (saved_tensors_idx) must be a tuple of tensors, got Tensor",
        id="group-not-a-tuple",
    ),
    pytest.param(
        two_outputs_fwd,
        {"non_differentiable_idx": (2,)},
        ValueError,
        "custom_vjp fwd rule two_outputs_fwd for F returned 2 outputs, but non_differentiable_idx=(2,), which names output 2",
        id="output-out-of-range",
    ),
    pytest.param(
        double_fwd,
        {"dirty_idx": (1,)},
        ValueError,
        "F was called with 1 positional input, but dirty_idx=(1,), which names input 1",
        id="input-out-of-range",
    ),
    pytest.param(
        not_a_pair_fwd,
        {},
        TypeError,
        "custom_vjp fwd rule not_a_pair_fwd for F must return a pair (outputs, residuals), got Tensor",
        id="not-a-pair",
    ),
]


@pytest.mark.parametrize("fill_defaults", [False, True], ids=["combined-carrier", "setup-context-carrier"])
@pytest.mark.parametrize(("fwd", "keywords", "error", "message"), AT_FIRST_CALL)
def test_indices_checked_against_what_fwd_returns(fwd, keywords, error, message, fill_defaults):
    flat = custom_vjp(
        fwd,
        two_outputs_bwd if fwd is two_outputs_fwd else double_bwd,
        name="F",
        fill_defaults=fill_defaults,
        **keywords,
    )
    for _ in range(2):  # a failed check stays in place: the next call is checked again
        with pytest.raises(error) as raised:
            flat(leaf())
        assert str(raised.value) == message


def test_checked_under_torch_func_too():
    flat = custom_vjp(double_fwd, double_bwd, name="F", saved_for_backward_idx=(1,))
    with pytest.raises(ValueError, match="custom_vjp fwd rule double_fwd for F returned 1 residual"):
        torch.func.grad(lambda x: flat(x).sum())(torch.ones(3))


@pytest.mark.parametrize("fill_defaults", [False, True], ids=["combined-carrier", "setup-context-carrier"])
def test_checked_on_the_first_call_only(monkeypatch, fill_defaults):
    checks = []

    def counting(spec, result, inputs):
        checks.append(spec.name)
        inliner.runtime._contract.check_first_result(spec, result, inputs)

    monkeypatch.setattr(inliner.runtime._carriers, "check_first_result", counting)
    flat = custom_vjp(double_fwd, double_bwd, name="F", saved_for_backward_idx=(0,), fill_defaults=fill_defaults)
    x = leaf()
    for _ in range(3):
        flat(x).sum().backward()
    assert checks == ["F"]
    assert torch.equal(x.grad, torch.full((3,), 9.0))
    if not fill_defaults:  # the carrier's generated forward now calls fwd itself
        assert flat.carriers().eager.forward.__globals__["__fwd"] is double_fwd


def test_a_well_formed_group_passes():
    flat = custom_vjp(group_fwd, double_bwd, name="F", saved_tensors_idx=0)
    x = leaf()
    flat(x).sum().backward()
    assert torch.equal(x.grad, torch.full((3,), 3.0))


def test_a_class_deriving_from_a_flat_callable_is_told_why_where_it_is_defined():
    """A module the rewrite did not see (another package, the user's code) deriving from a
    flattened Function: the error names the base, its module and the way out, where Python
    alone says ``function() argument 'code' must be code, not str``."""
    flat = custom_vjp(lambda x: (x * 2, ()), lambda residuals, g: (g * 3,), name="Scale")
    with pytest.raises(TypeError, match=r"a class derives from Scale, which inliner flattened in module .*Exclude"):

        class Mine(flat):  # type: ignore[misc,valid-type]
            pass

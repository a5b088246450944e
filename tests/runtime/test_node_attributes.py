"""``ctx_attrs``: a residual that was ``ctx.<name>`` in the original is on the autograd node
under that name (``out.grad_fn.<name>``), and backward reads it from there when it runs, in
every residual layout the carriers know and in both eager carriers."""

from __future__ import annotations

import gc
import weakref

import pytest
import torch
from torch.autograd.function import once_differentiable

from inliner.runtime import Record, custom_vjp

BOTH_CARRIERS = pytest.mark.parametrize("fill_defaults", [False, True], ids=["combined", "setup-context"])


def leaf():
    return torch.arange(1.0, 4.0, requires_grad=True)


def scaled_fwd(x, k):
    # residuals: x saved, k named, and an unnamed plain slot after them (what a ctx attribute
    # that starts at backward's getattr default on some path becomes)
    return x * k, (x, k, 10.0)


def scaled_bwd(residuals, g):
    x, k, extra = residuals
    return g * x * k + extra, None


def scaled(name, fill_defaults):
    """``x * k`` whose ``k`` was ``ctx.k`` in the original: on the node as ``k``."""
    return custom_vjp(
        scaled_fwd,
        scaled_bwd,
        name=name,
        saved_for_backward_idx=(0,),
        ctx_attrs={1: "k"},
        fill_defaults=fill_defaults,
    )


@BOTH_CARRIERS
def test_the_node_holds_the_attribute_and_backward_reads_it(fill_defaults):
    flat = scaled("Scaled", fill_defaults)
    x = leaf()
    y = flat(x, 2.0)
    assert type(y.grad_fn).__name__ == "ScaledBackward"
    assert y.grad_fn.k == 2.0
    assert y.grad_fn.saved_tensors[0] is x
    y.grad_fn.k = 5.0
    (g,) = torch.autograd.grad(y.sum(), x)
    assert torch.equal(g, x.detach() * 5.0 + 10.0)


def plain_first_fwd(x, k):
    return x * k, (k, x)  # the saved slot does not lead: no saved prefix


def plain_first_bwd(residuals, g):
    k, x = residuals
    return g * x * k, None


@BOTH_CARRIERS
def test_without_a_saved_prefix(fill_defaults):
    flat = custom_vjp(
        plain_first_fwd,
        plain_first_bwd,
        name="PlainFirst",
        saved_for_backward_idx=(1,),
        ctx_attrs={0: "k"},
        fill_defaults=fill_defaults,
    )
    x = leaf()
    y = flat(x, 2.0)
    y.grad_fn.k = 3.0
    (g,) = torch.autograd.grad(y.sum(), x)
    assert torch.equal(g, x.detach() * 3.0)


def group_fwd(x, k):
    return x * k, ((x,), k)


def group_bwd(residuals, g):
    (x,), k = residuals
    return g * x * k, None


@BOTH_CARRIERS
@pytest.mark.parametrize("reads_saved", [True, False], ids=["reads-saved", "never-reads-saved"])
def test_with_a_saved_tensors_group(fill_defaults, reads_saved):
    bwd = group_bwd if reads_saved else (lambda residuals, g: (g * residuals[1], None))
    flat = custom_vjp(
        group_fwd,
        bwd,
        name="Group",
        saved_tensors_idx=0,
        ctx_attrs={1: "k"},
        bwd_reads_saved=reads_saved,
        fill_defaults=fill_defaults,
    )
    x = leaf()
    y = flat(x, 2.0)
    y.grad_fn.k = 4.0
    (g,) = torch.autograd.grad(y.sum(), x)
    assert torch.equal(g, (x.detach() if reads_saved else 1.0) * torch.full((3,), 4.0))


@BOTH_CARRIERS
def test_saved_on_demand(fill_defaults):
    def bwd(residuals, g):
        k = residuals[1]
        (x,) = residuals[:1]
        return g * x * k + residuals[2], None

    flat = custom_vjp(
        scaled_fwd,
        bwd,
        name="OnDemand",
        saved_for_backward_idx=(0,),
        ctx_attrs={1: "k"},
        saved_on_demand=True,
        fill_defaults=fill_defaults,
    )
    x = leaf()
    y = flat(x, 2.0)
    y.grad_fn.k = 6.0
    (g,) = torch.autograd.grad(y.sum(), x)
    assert torch.equal(g, x.detach() * 6.0 + 10.0)


def test_behind_backward_decorators():
    flat = custom_vjp(
        scaled_fwd,
        scaled_bwd,
        name="Decorated",
        saved_for_backward_idx=(0,),
        ctx_attrs={1: "k"},
        backward_decorators=(once_differentiable,),
    )
    x = leaf()
    y = flat(x, 2.0)
    assert y.grad_fn.k == 2.0
    y.grad_fn.k = 7.0
    (g,) = torch.autograd.grad(y.sum(), x)
    assert torch.equal(g, x.detach() * 7.0 + 10.0)


def jvp_fwd(x, k):
    return x * k, (k,)


def jvp_bwd(residuals, g):
    (k,) = residuals
    return g * k * 3, None


def jvp_rule(residuals, tx, tk):
    (k,) = residuals
    return tx * k


@BOTH_CARRIERS
def test_with_a_jvp(fill_defaults):
    flat = custom_vjp(jvp_fwd, jvp_bwd, name="Jvp", ctx_attrs={0: "k"}, jvp=jvp_rule, fill_defaults=fill_defaults)
    x = leaf()
    _, tangent = torch.func.jvp(lambda t: flat(t, 2.0), (x.detach(),), (torch.ones(3),))
    assert torch.equal(tangent, torch.full((3,), 2.0))
    y = flat(x, 2.0)
    y.grad_fn.k = 5.0
    (g,) = torch.autograd.grad(y.sum(), x)
    assert torch.equal(g, torch.full((3,), 15.0))


@BOTH_CARRIERS
def test_torch_func_gets_the_residuals(fill_defaults):
    flat = scaled("Func", fill_defaults)
    x = leaf().detach()
    g = torch.func.grad(lambda t: flat(t, 2.0).sum())(x)
    assert torch.equal(g, x * 2.0 + 10.0)


@BOTH_CARRIERS
def test_a_deleted_attribute_is_the_originals_error(fill_defaults):
    flat = scaled("Gone", fill_defaults)
    y = flat(leaf(), 2.0)
    del y.grad_fn.k
    with pytest.raises(AttributeError, match="'GoneBackward' object has no attribute 'k'"):
        y.sum().backward()


@BOTH_CARRIERS
def test_retain_graph_backward_sees_each_write(fill_defaults):
    flat = scaled("Again", fill_defaults)
    x = leaf()
    y = flat(x, 2.0).sum()
    node = y.grad_fn.next_functions[0][0]
    grads = []
    for k in (1.0, 2.0):
        node.k = k
        grads.append(torch.autograd.grad(y, x, retain_graph=True)[0])
    assert torch.equal(grads[0], x.detach() + 10.0)
    assert torch.equal(grads[1], x.detach() * 2.0 + 10.0)


def record_fwd(x, k):
    state = Record("Recorded")
    state.k = k
    state.big = x * 1  # a tensor only the record holds
    state.calls = 0
    return x * k, (state,)


def record_bwd(residuals, g):
    (state,) = residuals
    state.calls += 1
    return g * state.k, None


@BOTH_CARRIERS
def test_a_records_attributes_are_the_nodes(fill_defaults):
    flat = custom_vjp(record_fwd, record_bwd, name="Recorded", ctx_record=True, fill_defaults=fill_defaults)
    x = leaf()
    y = flat(x, 2.0)
    node = y.grad_fn
    assert (node.k, node.calls) == (2.0, 0)
    node.k = 3.0
    (g,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    assert torch.equal(g, torch.full((3,), 3.0))
    torch.autograd.grad(y.sum(), x)
    assert node.calls == 2  # what backward wrote, on the node


@BOTH_CARRIERS
@pytest.mark.parametrize("record", [False, True], ids=["named", "record"])
def test_the_node_holds_no_cycle(fill_defaults, record):
    """The attributes go with the node, without the garbage collector (no reference cycle)."""
    if record:
        flat = custom_vjp(record_fwd, record_bwd, name="Recorded", ctx_record=True, fill_defaults=fill_defaults)
    else:
        flat = custom_vjp(
            lambda x, k: (x * k, (x * 1,)),
            lambda r, g: (g * r[0], None),
            name="Named",
            ctx_attrs={0: "big"},
            fill_defaults=fill_defaults,
        )
    x = leaf()
    y = flat(x, 2.0)
    torch.autograd.grad(y.sum(), x, retain_graph=True)
    big = weakref.ref(y.grad_fn.big)
    gc.disable()
    try:
        del y
        # the setup_context carrier's thread-local keeps the last call's recipe until the next call
        flat(leaf(), 2.0)
        assert big() is None
    finally:
        gc.enable()

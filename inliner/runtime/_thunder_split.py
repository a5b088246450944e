"""thunder support for the split path's ``inliner::attach`` op: thunderfx runs a Function
whose forward dynamo traced (numpy, objects, functions passed in) inside thunder, with its
custom backward, instead of breaking the graph at the call.

Under thunderfx, dynamo traces the split path's shim (``_split``): fwd's own operations
(numpy through dynamo's numpy tracing), then ``attach(outs, ins, saved, numbers, key,
tag)`` inside ``attach_as_tuple``, one graph node returning a tuple (thunder's splitter
cannot take the op's list result). The splitter hands that node to thunder
(``thunder_supported``), whose jit meets the op inside it through
:func:`_attach_lookaside`: one symbol named after the original,
built by the flat callables' own lookaside (``_thunder._lookaside``), whose forward
returns the outputs (thunder's shallow copies, as ``attach``'s clones) and whose grad
rule is

- a traceable ``bwd``: its trace on the residuals and the output gradients, as for a
  flat callable;
- any other ``bwd``: one call of ``inliner::call_bwd``, an operator thunder runs for
  real on every backward (its effects on every call, as in eager), whose output metadata
  is what its fake states: a gradient like each tensor input.

The forward's operations before the op are thunder's or its fallback's (thunder has no
numpy); the op itself never falls back. The symbol prints as the original's name with
the op's lists spelled out (``NumpySin(outs, x, x)``) and that name is bound, in the
trace's ``python_ctx()``, to a call of ``attach`` with those lists: run eagerly it is the
op (custom backward included); under ``thunder.jit`` it meets this lookaside again.

Imported only once thunder is (``_dynamo``'s registration waits for it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch
from thunder.core import jit_ext
from thunder.core.interpreter import ProvenanceRecord, PseudoInst, unwrap, wrap, wrap_const
from thunder.core.proxies import TensorProxy

from inliner.runtime import _split, _thunder

_ATTACH = torch.ops.inliner.attach.default
_CALL_BWD = torch.ops.inliner.call_bwd.default


def register() -> None:
    """Route every ``thunder.jit`` call of ``attach`` through :func:`_attach_lookaside`, and
    let the split path be taken where thunder is loaded (through ``attach_as_tuple``,
    which thunderfx's splitter hands to thunder)."""
    jit_ext._general_jit_lookaside_map[_ATTACH] = _attach_lookaside
    _split.thunder_takes_attach()


def _attach_lookaside(outs: Any, ins: Any, saved: Any, numbers: Any, key: Any, tag: Any) -> Any:
    """One ``attach`` call under ``thunder.jit``: the flat callables' lookaside on the op's
    lists laid out flat (``_thunder`` takes tensors, numbers and tuples of them)."""
    lists = (outs, ins, saved, numbers)
    sizes = tuple(len(unwrap(part)) for part in lists)
    items = tuple(_items(part) for part in lists)
    entry = _split._LAYOUTS[unwrap(key)]
    spec = entry.spec
    call = _attach_call(unwrap(key), unwrap(tag), sizes)
    # a bwd behind the original's backward decorators runs as call_bwd (``_split._run_bwd``
    # calls it through them, with what forward's decorators set on ctx)
    traceable = spec.backward_kind == "traceable" and spec.decorated is None
    fwd = _forward(unwrap(key), sizes, traceable)
    backward = _backward(entry, sizes) if traceable else _opaque_backward(entry, unwrap(key), sizes)
    how = _thunder._How((), False, False)
    flat_items = tuple(item for part in items for item in part)
    return _thunder._lookaside(call, spec.name, fwd, fwd, backward, how, *flat_items)


def _items(wrapped: Any) -> tuple:
    """The interpreter's values of a wrapped list's items."""
    return tuple(
        wrap(
            value,
            provenance=ProvenanceRecord(
                PseudoInst.BINARY_SUBSCR, inputs=[wrapped.provenance, wrap_const(i).provenance]
            ),
        )
        for i, value in enumerate(unwrap(wrapped))
    )


def _split_items(items: tuple, sizes: tuple[int, ...]) -> list[list]:
    parts, start = [], 0
    for size in sizes:
        parts.append(list(items[start : start + size]))
        start += size
    return parts


@functools.cache
def _attach_call(key: int, tag: str, sizes: tuple[int, ...]) -> Callable:
    """What the symbol's name is bound to in the trace's ``python_ctx()``: ``attach`` on the
    flat items, regrouped (one per layout, so every call of one layout prints as one name)."""

    def call(*items: Any) -> Any:
        outs, ins, saved, numbers = _split_items(items, sizes)
        return tuple(_ATTACH(outs, ins, saved, numbers, key, tag))

    return call


def _forward(key: int, sizes: tuple[int, ...], traceable: bool) -> Callable:
    """The symbol's forward, called as ``(ctx, *items)``: the outputs as they are (thunder's
    lookaside makes each a copy of its own), and the residuals: bwd's, rebuilt from the
    layout (a traceable bwd), or the op's lists (``call_bwd`` takes them)."""

    def forward(holder: Any, *items: Any) -> Any:
        outs, ins, saved, numbers = _split_items(items, sizes)
        if traceable:
            residuals, _no_ctx_attrs = _split._residuals(key, saved, numbers)
            return tuple(outs), residuals
        return tuple(outs), (tuple(ins), tuple(saved), tuple(numbers))

    return forward


def _gradients_per_item(entry: Any, sizes: tuple[int, ...], per_argument: Any) -> tuple:
    """bwd's gradients (one per argument of the original call) laid out as the items:
    the tensor arguments' in the ``ins`` slots, None elsewhere."""
    n_outs, _, n_saved, n_numbers = sizes
    result = per_argument if isinstance(per_argument, tuple) else (per_argument,)
    per_in = tuple(result[p] if p < len(result) else None for p, tensor in enumerate(entry.arguments) if tensor)
    return (None,) * n_outs + per_in + (None,) * (n_saved + n_numbers)


def _backward(entry: Any, sizes: tuple[int, ...]) -> Callable:
    """A traceable bwd, traced by the lookaside on the residuals and the output gradients."""
    spec = entry.spec

    def backward(ctx: Any, *grads: Any) -> Any:
        it = iter(grads)
        all_grads = [next(it) if tensor else None for tensor in entry.outputs]
        residuals = ctx._inliner_residuals
        if spec.bwd_needs_input_grad:
            result = spec.bwd(residuals, *all_grads, needs_input_grad=entry.needs_input_grad)
        else:
            result = spec.bwd(residuals, *all_grads)
        return _gradients_per_item(entry, sizes, result)

    return backward


def _opaque_backward(entry: Any, key: int, sizes: tuple[int, ...]) -> Callable:
    """Any other bwd: ``call_bwd`` as one operator thunder runs for real on every backward;
    its literal Nones (``backward_nones``) put back."""
    spec = entry.spec
    call_bwd = _call_bwd_operator(spec.name)
    positions = [p for p, tensor in enumerate(entry.arguments) if tensor]

    def backward(ctx: Any, *grads: Any) -> Any:
        ins, saved, numbers = ctx._inliner_residuals
        gradients = call_bwd(list(grads), list(ins), list(saved), list(numbers), key)
        per_in = tuple(None if p in spec.backward_nones else g for p, g in zip(positions, gradients))
        n_outs, _, n_saved, n_numbers = sizes
        return (None,) * n_outs + per_in + (None,) * (n_saved + n_numbers)

    return backward


def _call_bwd_meta(grads: list, ins: list, saved: list, numbers: list, key: int) -> list:
    return [TensorProxy(like=i) for i in ins]


def _call_bwd_operator(name: str) -> Any:
    """``call_bwd`` as an operator of the jit's ad hoc executor, printed as
    ``<Name>_backward_<id>_<n>`` and bound to the op in its trace's ``python_ctx()``."""
    executor = jit_ext.get_jit_ctx().ad_hoc_executor
    return executor.register_operator(f"{name}_backward", meta=_call_bwd_meta, fn=_CALL_BWD)

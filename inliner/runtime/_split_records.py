"""A ctx record on the split path: what fwd left on it crosses ``attach`` as residuals.

Dynamo traces fwd's ``Record(...)`` and the writes to it like any new object. The record
itself cannot ride the op (it holds tensors), so the shim lays it out as its attributes
and the tensors it saved, each flattened like any residual, and the backward gets a
fresh record holding them: what bwd reads from it (attributes, ``saved_tensors``,
``needs_input_grad``) is what the original's backward read from its ctx.

What a record does that this does not carry breaks the graph at the call (an eager
island, with one warning): marking an input dirty, ``set_materialize_grads(False)``. A
backward that may write to the record is refused statically (``_split.refusal``): each
backward gets a new record, where the original's writes stay on its ctx for the next.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inliner.runtime._record import _UNSET, Record, bind


def refusal(record: Record) -> str | None:
    """Run while dynamo traces the shim: what fwd did to ``record`` that the split path
    does not carry (None: nothing)."""
    if record.dirty_tensors is not None:
        return "its ctx record marks an input dirty"
    materialize = record._inliner_materialize
    if materialize is not _UNSET and not materialize:
        return "its ctx record sets set_materialize_grads(False)"
    return None


def non_differentiable(record: Record, outputs: tuple) -> tuple[int, ...]:
    """The positions of ``outputs`` that fwd marked non-differentiable on ``record``."""
    marked = record.non_differentiable
    if marked is None:
        return ()
    return tuple(j for j, out in enumerate(outputs) if any(out is t for t in marked))


def flatten(record: Record, flatten_value: Callable[[Any], Any]) -> tuple:
    """``record``'s layout: its Function's name, its attributes' names, and the layouts of
    their values and of the tensors it saved (``flatten_value`` lays out one value)."""
    names = tuple(vars(record))
    values = tuple(flatten_value(getattr(record, name)) for name in names)
    to_save = record.to_save
    saved = flatten_value(tuple(to_save) if to_save is not None else ())
    return ("record", record._inliner_name, names, values, saved)


def rebuild(layout: tuple, rebuild_value: Callable[[Any], Any], needs_input_grad: tuple[bool, ...]) -> Record:
    """A record holding what ``flatten`` laid out (``rebuild_value`` rebuilds one value), as
    the original's backward found its ctx."""
    _, name, names, values, saved = layout
    record = Record(name, needs_input_grad)
    for attribute, value in zip(names, values):
        object.__setattr__(record, attribute, rebuild_value(value))
    bind(record, _Saved(rebuild_value(saved)), strong=True)
    return record


class _Saved:
    """What a rebuilt record reads ``saved_tensors`` from."""

    __slots__ = ("saved_tensors",)

    def __init__(self, saved_tensors: tuple) -> None:
        self.saved_tensors = saved_tensors

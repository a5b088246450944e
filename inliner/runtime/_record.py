"""``Record``: the ctx of one call of a flattened Function, as a plain object that fwd fills.

A Function whose ctx cannot be spelled as named residuals (ctx handed to a helper,
attributes set on some paths only, backward writing to ctx, ...) is flattened with
its ctx made explicit: fwd creates a ``Record``, its body uses it exactly where the
original used ctx, and it returns the record as its one residual; bwd (and jvp)
receive it and may read and write it like the original's ctx.

A record is what torch's own ``FunctionCtx`` is before autograd processes it:
``save_for_backward``, ``mark_dirty``, ``mark_non_differentiable``, ``save_for_forward``
and ``set_materialize_grads`` are torch's own methods, which only store their
arguments (``to_save``, ``dirty_tensors``, ...). Autograd reads those once forward has
returned; the carrier does the same with :func:`replay` on the real ctx, so saved
tensors still go through ``save_for_backward`` (version checks, saved-tensor hooks,
freeing after backward) and the marks land on the real outputs, and what fwd set on the
record is set on the real ctx, the autograd node (``out.grad_fn``), as the original's
forward left it. Afterwards the record reads ``saved_tensors`` and ``needs_input_grad``
from that ctx. The eager carriers give bwd that real ctx itself in the record's place
(what the original's backward got): a write through ``grad_fn`` is what backward reads,
what backward writes is on the node, and a second backward (``retain_graph=True``) sees
what the first wrote. Where there is no node (torch.func's wrapped ctx, thunder), bwd
gets the record.

What a real ctx answers and a record does not (``next_functions``, hooks, ...) is
refused statically by the engine; a read of such a name fails loudly here.
"""

from __future__ import annotations

import reprlib
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch.autograd.function import FunctionCtx

__all__ = ["Record", "bind", "copy_with", "replay", "state_of"]

_UNSET = object()

# What torch's ctx keeps for autograd to process after forward, in the order ``replay``
# hands it over; each is None after that, as on the real ctx.
_PENDING = ("to_save", "saved_for_forward", "dirty_tensors", "non_differentiable")


class Record(FunctionCtx):
    """The ctx of one call of the flattened Function ``name`` (see the module docstring)."""

    __slots__ = (*_PENDING, "_inliner_name", "_inliner_materialize", "_inliner_needs_input_grad", "_inliner_ctx")

    def __init__(self, name: str, needs_input_grad: tuple[bool, ...] | None = None) -> None:
        self._inliner_name = name
        self._inliner_needs_input_grad = needs_input_grad
        self._inliner_materialize = _UNSET
        self._inliner_ctx: Callable[[], Any] | None = None
        # torch's FunctionCtx only ever assigns tuples to these (mypy infers their type from
        # that); a record holds None while nothing is pending, as _PENDING says
        self.to_save = self.saved_for_forward = self.dirty_tensors = self.non_differentiable = None  # type: ignore[assignment]

    # -- what torch's ctx answers ------------------------------------------------------
    @property
    def saved_tensors(self) -> tuple:
        # torch: the tensors given to save_for_forward while forward runs (and in jvp);
        # before autograd saved anything, (); afterwards, the real ctx's (unpacked, checked)
        if self.saved_for_forward is not None:
            return self.saved_for_forward
        if self._inliner_ctx is None:
            return ()
        ctx = self._inliner_ctx()
        if ctx is None:
            raise RuntimeError(f"the autograd node of this {self._inliner_name} call no longer exists")
        return ctx.saved_tensors

    @saved_tensors.setter
    def saved_tensors(self, value: Any) -> None:
        raise AttributeError("attribute 'saved_tensors' of 'torch._C._FunctionBase' objects is not writable")

    @property
    def saved_variables(self) -> tuple:
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    @property
    def needs_input_grad(self) -> tuple[bool, ...]:
        if self._inliner_needs_input_grad is None:
            raise RuntimeError(
                f"{self._inliner_name}: this record was made without needs_input_grad (an inliner bug; please report it)"
            )
        return self._inliner_needs_input_grad

    @needs_input_grad.setter
    def needs_input_grad(self, value: Any) -> None:  # torch's ctx lets it be assigned too
        self._inliner_needs_input_grad = value

    @property
    def materialize_grads(self) -> Any:
        raise AttributeError("attribute 'materialize_grads' of 'torch._C._FunctionBase' objects is not readable")

    @materialize_grads.setter
    def materialize_grads(self, value: Any) -> None:  # what set_materialize_grads does
        self._inliner_materialize = value

    def __getattr__(self, name: str) -> Any:
        # only reached when nothing is set under ``name``: the original's error, word for word
        if name.startswith("_inliner_"):
            raise AttributeError(name)
        if name == "materialize_grads":  # its getter raised: torch's attribute is write-only
            raise AttributeError("attribute 'materialize_grads' of 'torch._C._FunctionBase' objects is not readable")
        raise AttributeError(f"'{self._inliner_name}Backward' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        try:
            object.__delattr__(self, name)
        except AttributeError:
            raise AttributeError(f"'{self._inliner_name}Backward' object has no attribute '{name}'") from None

    def __repr__(self) -> str:
        items = ", ".join(
            f"{key}={_short(value)}" for key, value in vars(self).items() if not key.startswith("_inliner_")
        )
        return f"<{self._inliner_name} ctx record{': ' if items else ''}{items}>"


def _short(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor(shape={tuple(value.shape)}, dtype={value.dtype})"
    return reprlib.repr(value)


def replay(ctx: Any, record: Record) -> None:
    """Hand what fwd asked of ``record`` to the real ``ctx``, as autograd takes it from its
    own ctx once forward returns, set what fwd set on it on ``ctx`` (the autograd node),
    and let the record answer from ``ctx`` from now on."""
    if record.to_save is not None:
        ctx.save_for_backward(*record.to_save)
    if record.saved_for_forward is not None:
        ctx.save_for_forward(*record.saved_for_forward)
    if record.dirty_tensors is not None:
        ctx.mark_dirty(*record.dirty_tensors)
    if record.non_differentiable is not None:
        ctx.mark_non_differentiable(*record.non_differentiable)
    if record._inliner_materialize is not _UNSET:
        ctx.set_materialize_grads(record._inliner_materialize)
    record.to_save = record.saved_for_forward = record.dirty_tensors = record.non_differentiable = None  # type: ignore[assignment]  # see Record.__init__
    record._inliner_needs_input_grad = ctx.needs_input_grad
    bind(record, ctx)
    ctx.__dict__.update(vars(record))  # on the node, as the original's forward left its ctx


def bind(record: Record, ctx: Any, strong: bool = False) -> None:
    """Let ``record`` read ``saved_tensors`` from ``ctx`` (the ctx backward or jvp runs with:
    torch.func's generated vmap rules pass a wrapper with its own saved tensors). A weak
    reference, unless ``strong``: the ctx holds the record, and a cycle would keep a graph
    alive until the garbage collector runs."""
    if not strong:
        try:
            record._inliner_ctx = weakref.ref(ctx)
            return
        except TypeError:
            pass
    record._inliner_ctx = lambda: ctx


def state_of(record: Record) -> dict[str, Any]:
    """Everything fwd left on ``record``: its attributes and what autograd has yet to process."""
    state = {key: getattr(record, key) for key in _PENDING}
    state["_inliner_materialize"] = record._inliner_materialize
    state.update(vars(record))
    return state


def copy_with(record: Record, state: dict[str, Any]) -> Record:
    """A record of the same Function holding ``state`` (one per ctx: torch.func runs
    setup_context once per transform level, each level with its own ctx)."""
    new = Record(record._inliner_name, record._inliner_needs_input_grad)
    for key, value in state.items():
        object.__setattr__(new, key, value)
    return new


def records_in(residuals: tuple) -> list[Record]:
    return [r for r in residuals if type(r) is Record]

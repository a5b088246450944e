"""Dataclass arguments of a flat callable under ``thunder.jit``: laid out flat, so that
the symbol thunder records takes tensors and numbers only.

A thunder trace cannot take a dataclass (it prints a proxy's name per parameter). Read
through the interpreter, a dataclass's fields are what thunder makes of any input: a
tensor field becomes a proxy the prologue reads from the object on every call (a field
set to another tensor is seen), a number a guarded constant. The lookaside then traces
``fwd`` on a new instance of the class whose fields are those values, as the
torch.compile graph path rebuilds one from its leaves (``_dynamo``), and the symbol
takes the leaves. A Function takes no gradient for what it reads from an object (eager
gives a non-tensor argument none): the leaves get none either.

Only where nothing else is per argument: a forward or backward reading
``needs_input_grad`` or a ctx record keep the refusal naming the Function.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from thunder.core.interpreter import INTERPRETER_SIGNALS, _interpret_call, unwrap, wrap_const
from thunder.core.proxies import ProxyInterface, proxy
from thunder.core.trace import TraceCtx, tracectx

#: How deep fields are followed into nested dataclasses.
_MAX_DEPTH = 8


@dataclasses.dataclass(frozen=True)
class Flattened:
    """A call's arguments laid out flat: ``items`` (the interpreter's values) and, per
    argument, its layout (None: the argument is one item)."""

    items: tuple
    layouts: tuple

    def rebuild(self, items: tuple) -> tuple:
        """The call's arguments, with ``items`` in place of the leaves."""
        it = iter(items)
        return tuple(_build(layout, it) for layout in self.layouts)

    def per_item(self, per_argument: tuple) -> tuple:
        """One value per item from one per argument: an argument's own, or None for each
        leaf of a dataclass (eager gives a non-tensor argument no gradient)."""
        out: list = []
        for layout, value in zip(self.layouts, per_argument):
            out.extend([value] if layout is None else [None] * _count(layout))
        return tuple(out)


def flattened(args: tuple) -> Flattened | None:
    """``args`` (the interpreter's values) with dataclasses laid out flat, or None when
    none is a dataclass or one holds what no trace takes (a module, a function, ...)."""
    items: list = []
    layouts: list[Any] = []
    for arg in args:
        if not _is_dataclass(unwrap(arg)):
            items.append(arg)
            layouts.append(None)
            continue
        layout = _flatten(arg, items, 0)
        if layout is None:
            return None
        layouts.append(layout)
    if all(layout is None for layout in layouts):
        return None
    return Flattened(tuple(items), tuple(layouts))


def _is_dataclass(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _flatten(wrapped: Any, items: list, depth: int) -> Any:
    """The layout of one dataclass argument (its fields read through the interpreter, so
    thunder's prologue reads them from the object); None if a field is no trace input."""
    value = unwrap(wrapped)
    cls = type(value)
    fields = []
    for field in dataclasses.fields(cls):
        read = _interpret_call(getattr, wrapped, wrap_const(field.name))
        if read is INTERPRETER_SIGNALS.EXCEPTION_RAISED:
            return None
        if _is_dataclass(unwrap(read)) and depth < _MAX_DEPTH:
            inner = _flatten(read, items, depth + 1)
            if inner is None:
                return None
            fields.append((field.name, inner))
        elif _takes(unwrap(read)):
            items.append(read)
            fields.append((field.name, None))
        else:
            return None
    return (cls, tuple(fields))


def _takes(value: Any) -> bool:
    """Whether a trace takes ``value`` as an input (a proxy, a number, a string, None...)."""
    if isinstance(value, ProxyInterface):
        return True
    with tracectx(TraceCtx()):  # the proxy made to ask is thrown away
        return isinstance(proxy(value), ProxyInterface) or value is None or isinstance(value, (str, bool))


def _build(layout: Any, items: Any) -> Any:
    if layout is None:
        return next(items)
    cls, fields = layout
    obj = cls.__new__(cls)
    for name, inner in fields:
        object.__setattr__(obj, name, _build(inner, items))
    return obj


def _count(layout: Any) -> int:
    if layout is None:
        return 1
    return sum(_count(inner) for _, inner in layout[1])


def on_items(flat: Flattened, function: Callable, leading: int = 0) -> Callable:
    """``function`` called with the arguments rebuilt from the items (after ``leading``
    arguments passed as they are: the ctx stand-in)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return function(*args[:leading], *flat.rebuild(args[leading:]), **kwargs)

    return call

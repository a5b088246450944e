"""The one warning a user gets when ``torch.compile`` runs a flat callable eagerly where
its original may not have: per Function (a feature the split path does not carry) or per
Function and argument type (an argument no mechanism carries into the graph)."""

from __future__ import annotations

import warnings

import torch


def eager_message(name: str, why: str) -> str:
    """What the warning and the graph break say when ``name`` runs eagerly under torch.compile."""
    return f"inliner: {name} runs eagerly under torch.compile (a graph break at the call): {why}"


class CompileFallbackWarning(UserWarning):
    """A flat callable ran eagerly inside a ``torch.compile`` region (a graph break at the call)."""


_fallback_warned: set[tuple[str, str]] = set()


def _warn_eager_fallback(name: str, args: tuple, kwargs: dict) -> None:
    """One warning per Function and argument type when dynamo could not carry an argument
    into its graph and ran the call eagerly instead (a graph break at the call)."""
    kind = _first_object_type(args, kwargs)
    if kind is None or (name, kind) in _fallback_warned:
        return
    _fallback_warned.add((name, kind))
    warnings.warn(
        eager_message(name, f"its argument of type {kind} could not be carried into the graph"),
        CompileFallbackWarning,
        stacklevel=4,
    )


def _first_object_type(args: tuple, kwargs: dict) -> str | None:
    """The qualified name of the first argument that is not a tensor, a scalar, or a
    list/tuple/dict of those; None if there is none."""
    stack = list(reversed((*args, *kwargs.values())))
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind in (list, tuple):
            stack.extend(reversed(value))
        elif kind is dict:
            stack.extend(reversed(list(value.values())))
        elif not isinstance(value, _LEAF_TYPES):
            return f"{kind.__module__}.{kind.__qualname__}"
    return None


_LEAF_TYPES = (torch.Tensor, int, float, bool, complex, str, bytes, type(None), torch.dtype, torch.device)


_fallback_names: set[str] = set()


def _warn_fallback_once(name: str, reason: str) -> None:
    """One warning per Function that torch.compile runs as an eager island because the
    split path does not carry one of its features (``inliner.runtime._split``)."""
    if name in _fallback_names:
        return
    _fallback_names.add(name)
    warnings.warn(
        eager_message(name, reason),
        CompileFallbackWarning,
        stacklevel=3,
    )
